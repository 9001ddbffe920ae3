// For digest_md5_java_test.cc only: the JDK's own DIGEST-MD5 server (the one Hadoop's RPC server
// uses for tokens: protocol "", server name "default"), driven over stdin and stdout one line at a
// time, every payload in hex.
//
//   java DigestMd5JavaServer.java <qop list, e.g. auth-conf> <password>
//   server: CHALLENGE <hex>          client: RESPONSE <hex>
//   server: SUCCESS <hex> qop=<negotiated qop>   (or ERROR <text>)
//   then, for each client line TOKEN <hex>: the server unwraps it and answers
//   TOKEN <hex> with its own wrap of "echo:" + the message (or ERROR <text>)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;

public class DigestMd5JavaServer {
  public static void main(String[] args) throws Exception {
    String qop = args[0];
    char[] password = args[1].toCharArray();
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, qop);
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "", "default", props, callbacks -> {
      for (Callback c : callbacks) {
        if (c instanceof PasswordCallback) {
          ((PasswordCallback) c).setPassword(password);
        } else if (c instanceof AuthorizeCallback) {
          ((AuthorizeCallback) c).setAuthorized(true);
        } else if (!(c instanceof NameCallback) && !(c instanceof RealmCallback)) {
          throw new javax.security.auth.callback.UnsupportedCallbackException(c);
        }
      }
    });
    HexFormat hex = HexFormat.of();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("CHALLENGE " + hex.formatHex(server.evaluateResponse(new byte[0])));
    System.out.flush();
    String line = in.readLine();
    try {
      byte[] rspauth = server.evaluateResponse(hex.parseHex(line.substring("RESPONSE ".length())));
      System.out.println("SUCCESS " + hex.formatHex(rspauth) + " qop="
          + server.getNegotiatedProperty(Sasl.QOP));
    } catch (Exception e) {
      System.out.println("ERROR " + e.getMessage());
      return;
    } finally {
      System.out.flush();
    }
    while ((line = in.readLine()) != null) {
      try {
        byte[] token = hex.parseHex(line.substring("TOKEN ".length()));
        byte[] message = server.unwrap(token, 0, token.length);
        if (message.length == 0 && token.length > 0) throw new Exception("token discarded");
        byte[] echo = ("echo:" + new String(message, StandardCharsets.ISO_8859_1))
            .getBytes(StandardCharsets.ISO_8859_1);
        System.out.println("TOKEN " + hex.formatHex(server.wrap(echo, 0, echo.length)));
      } catch (Exception e) {
        System.out.println("ERROR " + e.getMessage());
      }
      System.out.flush();
    }
  }
}
