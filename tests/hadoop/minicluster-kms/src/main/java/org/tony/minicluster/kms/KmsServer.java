package org.tony.minicluster.kms;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.kms.server.MiniKMS;

/**
 * Hadoop's MiniKMS on a free port of localhost, for the mini cluster's --kms option.
 *
 * <pre>
 * KmsServer CONF_DIR URL_FILE [--kerberos KEYTAB] [--token-lifetime-s S]
 * </pre>
 *
 * Writes CONF_DIR/kms-site.xml (keys in a JCEKS file beside it; with --kerberos, SPNEGO as every
 * HTTP/ principal of KEYTAB, and delegation tokens), starts the KMS, then writes its URL
 * (http://localhost:PORT/kms) to URL_FILE. With --token-lifetime-s, its delegation tokens die S
 * seconds after they are issued, and unrenewed after half of that (as the mini cluster's HDFS
 * tokens with the same option). It runs until its standard input ends: the launcher
 * that started it holds the other end, so the KMS never outlives it.
 */
public final class KmsServer {
  private KmsServer() {}

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      // A KMS that failed to start leaves threads behind that would keep this JVM alive.
      System.err.println("kms: " + t);
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    String keytab = null;
    long tokenLifetimeS = 0;
    for (int i = 2; i + 1 < args.length; i += 2) {
      if (args[i].equals("--kerberos")) {
        keytab = args[i + 1];
      } else if (args[i].equals("--token-lifetime-s")) {
        tokenLifetimeS = Long.parseLong(args[i + 1]);
      } else {
        args = new String[0];
      }
    }
    if (args.length < 2 || args.length % 2 != 0) {
      System.err.println(
          "usage: KmsServer CONF_DIR URL_FILE [--kerberos KEYTAB] [--token-lifetime-s S]");
      System.exit(2);
    }
    File confDir = new File(args[0]);
    File urlFile = new File(args[1]);
    if (!confDir.isDirectory() && !confDir.mkdirs()) {
      throw new IOException("cannot create " + confDir);
    }
    Configuration kms = new Configuration(false);
    kms.set("hadoop.kms.key.provider.uri",
        "jceks://file@" + new File(confDir, "kms.keystore").getAbsolutePath());
    if (tokenLifetimeS > 0) {
      kms.setLong("hadoop.kms.authentication.delegation-token.max-lifetime.sec", tokenLifetimeS);
      kms.setLong("hadoop.kms.authentication.delegation-token.renew-interval.sec",
          Math.max(1, tokenLifetimeS / 2));
    }
    if (keytab != null) {
      kms.set("hadoop.kms.authentication.type", "kerberos");
      kms.set("hadoop.kms.authentication.kerberos.keytab", new File(keytab).getAbsolutePath());
      kms.set("hadoop.kms.authentication.kerberos.principal", "*");
      kms.set("hadoop.kms.authentication.kerberos.name.rules", "DEFAULT");
    } else {
      kms.set("hadoop.kms.authentication.type", "simple");
    }
    try (OutputStream out = new FileOutputStream(new File(confDir, "kms-site.xml"))) {
      kms.writeXml(out);
    }
    // The KMS reads Hadoop's security mode from core-site.xml in its configuration directory.
    Configuration core = new Configuration(false);
    core.set("hadoop.security.authentication", keytab != null ? "kerberos" : "simple");
    try (OutputStream out = new FileOutputStream(new File(confDir, "core-site.xml"))) {
      core.writeXml(out);
    }

    MiniKMS server = new MiniKMS.Builder().setKmsConfDir(confDir).build();
    server.start();
    String url = server.getKMSUrl().toString().replaceAll("/$", "");
    File tmp = new File(urlFile.getPath() + ".tmp");
    Files.write(tmp.toPath(), (url + "\n").getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), urlFile.toPath(), StandardCopyOption.ATOMIC_MOVE);
    System.err.println("kms: serving at " + url);

    // Until the launcher goes (or closes the pipe).
    while (System.in.read() >= 0) {
      // nothing to read; only the end matters
    }
    server.stop();
    System.exit(0);
  }
}
