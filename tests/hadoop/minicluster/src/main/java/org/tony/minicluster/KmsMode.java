package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.client.CreateEncryptionZoneFlag;
import org.apache.hadoop.hdfs.client.HdfsAdmin;

/**
 * --kms: Hadoop's MiniKMS in a JVM of its own (tests/hadoop/minicluster-kms: the KMS needs
 * Hadoop's unshaded jars), started before HDFS, and an encryption zone on HDFS. The NameNode and
 * every client find the KMS through hadoop.security.key.provider.path (kms://http@localhost:PORT
 * /kms), written to core-site.xml. At start the launcher makes the key tony-test-key, the zone
 * /ez over it, and /ez/secret.txt holding {@link #SECRET_TEXT}, world-readable: what HDFS
 * permits, the KMS still decides (a reader needs a Kerberos login or a KMS delegation token).
 * With --secure the KMS takes SPNEGO (HTTP/localhost) and issues delegation tokens (kms-dt).
 * The KMS's standard input is a pipe from the launcher: it stops when the launcher does.
 */
final class KmsMode {
  static final String KEY = "tony-test-key";
  static final String ZONE = "/ez";
  static final String SECRET_FILE = ZONE + "/secret.txt";
  static final String SECRET_TEXT = "a secret kept in an encryption zone";

  private final File work;
  private Process process;
  private String providerUri;

  KmsMode(File data) {
    this.work = new File(data, "kms");
  }

  /** The provider URI, as clients name the KMS: kms://http@localhost:PORT/kms. */
  String providerUri() {
    return providerUri;
  }

  /**
   * Starts the KMS with the classpath the script built (system property
   * tony.minicluster.kms.classpath) and waits until it serves. With --secure, Kerberized; with
   * a token lifetime (--token-lifetime-s), its tokens die as HDFS's do.
   */
  void start(SecureMode secure, long tokenLifetimeS, long timeoutS)
      throws IOException, InterruptedException {
    String classpath = System.getProperty("tony.minicluster.kms.classpath", "");
    if (classpath.isEmpty()) {
      throw new IOException("--kms: the KMS's classpath (tony.minicluster.kms.classpath) is not set;"
          + " start the cluster with scripts/hadoop-minicluster");
    }
    if (!work.isDirectory() && !work.mkdirs()) {
      throw new IOException("cannot create " + work);
    }
    File urlFile = new File(work, "url");
    Files.deleteIfExists(urlFile.toPath());
    List<String> cmd = new ArrayList<>();
    cmd.add(new File(System.getProperty("java.home"), "bin/java").getPath());
    cmd.add("-Xmx256m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:-UsePerfData");
    for (String p : new String[] {"java.lang", "java.util", "java.net", "java.io"}) {
      cmd.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
    }
    cmd.add("-Djava.net.preferIPv4Stack=true");
    cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
    if (secure != null) {
      cmd.add("-Djava.security.krb5.conf=" + secure.krb5Conf().getAbsolutePath());
    }
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add("org.tony.minicluster.kms.KmsServer");
    cmd.add(new File(work, "conf").getAbsolutePath());
    cmd.add(urlFile.getAbsolutePath());
    if (secure != null) {
      cmd.add("--kerberos");
      cmd.add(secure.serviceKeytab().getAbsolutePath());
    }
    if (tokenLifetimeS > 0) {
      cmd.add("--token-lifetime-s");
      cmd.add(Long.toString(tokenLifetimeS));
    }
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.to(new File(work, "kms.log")));
    // stdin stays a pipe to this JVM: its end (however the launcher goes) stops the KMS.
    process = pb.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
    while (!urlFile.isFile()) {
      if (!process.isAlive()) {
        throw new IOException("the KMS exited with " + process.exitValue() + " (log: "
            + new File(work, "kms.log") + ")");
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("the KMS did not serve within " + timeoutS + " s (log: "
            + new File(work, "kms.log") + ")");
      }
      Thread.sleep(100);
    }
    String url = new String(Files.readAllBytes(urlFile.toPath()), StandardCharsets.UTF_8).trim();
    // http://localhost:PORT/kms -> kms://http@localhost:PORT/kms
    providerUri = "kms://http@" + url.substring("http://".length());
  }

  /** The NameNode's (and every client's) way to the KMS. */
  void apply(Configuration conf) {
    conf.set("hadoop.security.key.provider.path", providerUri);
  }

  /** Makes the key, the zone and the secret file; as HDFS's superuser. */
  void createZone(FileSystem fs, Configuration conf)
      throws IOException, java.security.GeneralSecurityException {
    HdfsAdmin admin = new HdfsAdmin(fs.getUri(), conf);
    KeyProvider provider = admin.getKeyProvider();
    provider.createKey(KEY, KeyProvider.options(conf));
    provider.flush();
    Path zone = new Path(ZONE);
    fs.mkdirs(zone, new FsPermission((short) 0777));
    fs.setPermission(zone, new FsPermission((short) 0777));
    admin.createEncryptionZone(zone, KEY, EnumSet.of(CreateEncryptionZoneFlag.NO_TRASH));
    Path secret = new Path(SECRET_FILE);
    try (OutputStream out = fs.create(secret)) {
      out.write(SECRET_TEXT.getBytes(StandardCharsets.UTF_8));
    }
    fs.setPermission(secret, new FsPermission((short) 0644));
  }

  void env(Map<String, String> env) {
    env.put("MINICLUSTER_KMS", providerUri);
    env.put("MINICLUSTER_EZ_FILE", SECRET_FILE);
    env.put("MINICLUSTER_EZ_TEXT", SECRET_TEXT);
  }

  void stop() {
    if (process == null) {
      return;
    }
    try {
      process.getOutputStream().close();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (IOException | InterruptedException e) {
      process.destroyForcibly();
    }
  }
}
