package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * --https: every web endpoint of HDFS and YARN serves HTTPS only (dfs.http.policy and
 * yarn.http.policy HTTPS_ONLY), with a certificate for 127.0.0.1 and localhost signed by a test CA
 * made at start. What a client gets, in DIR: ssl-client.xml (Hadoop's keys:
 * ssl.client.truststore.location, .password, .type) naming truststore.jks (the CA, in a JKS
 * truststore as Hadoop's tooling writes it), and ca.pem (the CA, for curl). The servers' keystore
 * and ssl-server.xml stay under DIR/data. The keys come from the JDK's keytool. Test code only:
 * the passwords are fixed and the CA lives 30 days.
 */
final class HttpsMode {

  /** The keystores' password (test-only keys). */
  static final String PASSWORD = "tony-test-store";

  private final File dir;
  private final File work;

  HttpsMode(File dir, File data) {
    this.dir = dir;
    this.work = new File(data, "https");
  }

  File truststore() {
    return new File(dir, "truststore.jks");
  }

  File caPem() {
    return new File(dir, "ca.pem");
  }

  File sslClientXml() {
    return new File(dir, "ssl-client.xml");
  }

  /** Makes the CA, the servers' key and certificate, and the client's truststore. */
  void createKeys() throws IOException, InterruptedException {
    if (!work.isDirectory() && !work.mkdirs()) {
      throw new IOException("cannot create " + work);
    }
    String ca = new File(work, "ca.p12").getPath();
    String server = new File(work, "server.p12").getPath();
    String csr = new File(work, "server.csr").getPath();
    String signed = new File(work, "server.pem").getPath();
    Files.deleteIfExists(truststore().toPath());
    keytool("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048",
        "-dname", "CN=tony minicluster test CA", "-ext", "bc:c", "-validity", "30",
        "-storetype", "PKCS12", "-keystore", ca);
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca, "-file", caPem().getPath());
    keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048",
        "-dname", "CN=127.0.0.1", "-validity", "30", "-storetype", "PKCS12", "-keystore", server);
    keytool("-certreq", "-alias", "server", "-keystore", server, "-file", csr);
    keytool("-gencert", "-alias", "ca", "-keystore", ca, "-infile", csr, "-outfile", signed,
        "-rfc", "-validity", "30", "-ext", "san=ip:127.0.0.1,dns:localhost",
        "-ext", "ku:c=digitalSignature,keyEncipherment", "-ext", "eku=serverAuth");
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPem().getPath(),
        "-keystore", server);
    keytool("-importcert", "-alias", "server", "-file", signed, "-keystore", server);
    keytool("-importcert", "-noprompt", "-alias", "tony-minicluster-ca", "-file",
        caPem().getPath(), "-storetype", "JKS", "-keystore", truststore().getPath());
  }

  /** HTTPS_ONLY for HDFS and YARN, every HTTPS server on 127.0.0.1 (port 0 unless set later). */
  void apply(Configuration conf) {
    conf.set("dfs.http.policy", "HTTPS_ONLY");
    conf.set("yarn.http.policy", "HTTPS_ONLY");
    conf.set("hadoop.ssl.server.conf", "ssl-server.xml");
    conf.set("hadoop.ssl.client.conf", "ssl-client.xml");
    conf.setBoolean("hadoop.ssl.require.client.cert", false);
    conf.set("dfs.namenode.https-address", "127.0.0.1:0");
    conf.set("dfs.namenode.https-bind-host", "127.0.0.1");
    conf.set("dfs.datanode.https.address", "127.0.0.1:0");
    conf.set("yarn.nodemanager.webapp.https.address", "127.0.0.1:0");
  }

  /**
   * Writes ssl-server.xml and ssl-client.xml into the daemons' classpath directory, and
   * ssl-client.xml into DIR for clients.
   */
  void writeConf(File classpathDir) throws IOException {
    TreeMap<String, String> server = new TreeMap<>();
    server.put("ssl.server.keystore.location", new File(work, "server.p12").getAbsolutePath());
    server.put("ssl.server.keystore.type", "pkcs12");
    server.put("ssl.server.keystore.password", PASSWORD);
    server.put("ssl.server.keystore.keypassword", PASSWORD);
    server.put("ssl.server.truststore.location", truststore().getAbsolutePath());
    server.put("ssl.server.truststore.type", "jks");
    server.put("ssl.server.truststore.password", PASSWORD);
    MiniClusterLauncher.writeXml(new File(classpathDir, "ssl-server.xml"), server);
    Map<String, String> client = clientKeys();
    MiniClusterLauncher.writeXml(new File(classpathDir, "ssl-client.xml"), client);
    MiniClusterLauncher.writeXml(sslClientXml(), client);
  }

  private Map<String, String> clientKeys() {
    TreeMap<String, String> client = new TreeMap<>();
    client.put("ssl.client.truststore.location", truststore().getAbsolutePath());
    client.put("ssl.client.truststore.type", "jks");
    client.put("ssl.client.truststore.password", PASSWORD);
    return client;
  }

  void env(Map<String, String> env) {
    env.put("MINICLUSTER_HTTPS", "true");
    env.put("MINICLUSTER_CA_PEM", caPem().getAbsolutePath());
    env.put("MINICLUSTER_SSL_CLIENT_XML", sslClientXml().getAbsolutePath());
    env.put("MINICLUSTER_TRUSTSTORE", truststore().getAbsolutePath());
    env.put("MINICLUSTER_TRUSTSTORE_PASSWORD", PASSWORD);
  }

  private void keytool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(new File(System.getProperty("java.home"), "bin/keytool").getPath());
    command.add("-J-XX:TieredStopAtLevel=1");
    command.add("-J-XX:+UseSerialGC");
    command.addAll(Arrays.asList(args));
    command.add("-storepass");
    command.add(PASSWORD);
    if (Arrays.asList(args).contains("-genkeypair")) {
      command.add("-keypass");
      command.add(PASSWORD);
    }
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getOutputStream().close();
    byte[] output = process.getInputStream().readAllBytes();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("keytool " + args[0] + ": no exit within 60 s");
    }
    if (process.exitValue() != 0) {
      throw new IOException("keytool " + String.join(" ", args) + " failed: "
          + new String(output, StandardCharsets.UTF_8).trim());
    }
  }
}
