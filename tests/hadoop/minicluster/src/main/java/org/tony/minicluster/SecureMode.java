package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Properties;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The Kerberized mode of the test mini cluster (--secure): a KDC (Hadoop's MiniKdc) on
 * 127.0.0.1, the principals and keytabs of the daemons and of the test user, and the
 * security keys of the cluster's configuration.
 *
 * <p>Every daemon runs in one JVM, where the Kerberos login user is a single static
 * (UserGroupInformation), and an RPC server takes its Kerberos identity (the principal it
 * names to clients and the key it accepts with) from the current user of its threads, on
 * every connection. So the launcher starts HDFS inside a doAs of hdfs/localhost and YARN
 * inside a doAs of yarn/localhost: the daemons' threads inherit that Subject (JDK 17 threads
 * inherit their creator's access control context), so the NameNode and DataNode stay
 * hdfs/localhost and the ResourceManager and NodeManager (MiniYARNCluster skips their own
 * keytab login) are yarn/localhost, one principal for both, as on many real clusters. The
 * JVM's login user ends as yarn/localhost: the ResourceManager renews delegation tokens as
 * the login user, so an HDFS token for renewer yarn (the short name of
 * yarn.resourcemanager.principal) renews as on a real cluster.
 *
 * <p>Host part "localhost": what _HOST becomes for 127.0.0.1 in these daemons (the
 * canonical name of 127.0.0.1), written out in full in every key, so no client has to
 * resolve anything. SPNEGO (WebHDFS) accepts HTTP/localhost and HTTP/127.0.0.1, since a
 * client that asks for the service of the host in its URL (127.0.0.1, rdns off) gets the
 * second.
 */
final class SecureMode {

  static final String HOST = "localhost";
  private static final String LOOPBACK = "127.0.0.1";

  private final File dir;
  private final File data;
  private final String rpcProtection;
  private final String user;
  private final long tokenLifetimeS;
  private MiniKdc kdc;
  private String realm;
  private File krb5Conf;
  private File serviceKeytab;
  private File userKeytab;

  SecureMode(File dir, File data, String rpcProtection, String user, long tokenLifetimeS) {
    this.dir = dir;
    this.data = data;
    this.rpcProtection = rpcProtection;
    this.user = user;
    this.tokenLifetimeS = tokenLifetimeS;
  }

  String realm() { return realm; }
  String hdfsPrincipal() { return "hdfs/" + HOST + "@" + realm; }
  String yarnPrincipal() { return "yarn/" + HOST + "@" + realm; }
  String httpPrincipal() { return "HTTP/" + HOST + "@" + realm; }
  String userPrincipal() { return user + "@" + realm; }
  File krb5Conf() { return krb5Conf; }
  File userKeytab() { return userKeytab; }
  File serviceKeytab() { return serviceKeytab; }
  String rpcProtection() { return rpcProtection; }
  String kdcAddress() { return LOOPBACK + ":" + kdc.getPort(); }

  /** Starts the KDC, creates the principals, writes DIR/krb5.conf and the keytabs. */
  void startKdc() throws Exception {
    File kdcDir = new File(data, "kdc");
    File keytabs = new File(data, "keytabs");
    mkdirPrivate(kdcDir);
    mkdirPrivate(keytabs);

    Properties kconf = MiniKdc.createConf();
    kconf.setProperty(MiniKdc.KDC_BIND_ADDRESS, LOOPBACK);
    kconf.setProperty(MiniKdc.KDC_PORT, "0");
    kconf.setProperty(MiniKdc.ORG_NAME, "EXAMPLE");
    kconf.setProperty(MiniKdc.ORG_DOMAIN, "COM");
    kconf.setProperty(MiniKdc.TRANSPORT, "TCP");
    kconf.setProperty(MiniKdc.DEBUG, "false");
    kdc = new MiniKdc(kconf, kdcDir);
    kdc.start();
    realm = kdc.getRealm();

    serviceKeytab = new File(keytabs, "services.keytab");
    kdc.createPrincipal(serviceKeytab,
        "hdfs/" + HOST, "yarn/" + HOST, "HTTP/" + HOST, "HTTP/" + LOOPBACK);
    chmod600(serviceKeytab);

    // The user's keytab is made in the private directory, then moved into DIR.
    File tmpKeytab = new File(keytabs, "user.keytab");
    kdc.createPrincipal(tmpKeytab, user);
    chmod600(tmpKeytab);
    userKeytab = new File(dir, "user.keytab");
    Files.move(tmpKeytab.toPath(), userKeytab.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);

    krb5Conf = new File(dir, "krb5.conf");
    String text = "# Written by tony's test minicluster launcher: its KDC (MiniKdc, TCP only).\n"
        + "[libdefaults]\n"
        + "  default_realm = " + realm + "\n"
        + "  dns_lookup_realm = false\n"
        + "  dns_lookup_kdc = false\n"
        + "  dns_canonicalize_hostname = false\n"
        + "  rdns = false\n"
        + "  udp_preference_limit = 1\n"
        + "  forwardable = true\n"
        // The AES types both KDCs (Kerby; ApacheDS, Hadoop 2.10's) and current Kerberos
        // libraries share. Java 17 asks for the SHA-2 AES types first, which ApacheDS's KDC
        // does not know: without this its TGS replies fail in the JDK with "Message stream
        // modified (41)".
        + "  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96\n"
        + "  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96\n"
        + "  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96\n"
        + "\n"
        + "[realms]\n"
        + "  " + realm + " = {\n"
        + "    kdc = " + kdcAddress() + "\n"
        + "  }\n"
        + "\n"
        + "[domain_realm]\n"
        + "  " + HOST + " = " + realm + "\n"
        + "  " + LOOPBACK + " = " + realm + "\n";
    File t = new File(krb5Conf.getPath() + ".tmp");
    Files.write(t.toPath(), text.getBytes(StandardCharsets.UTF_8));
    Files.move(t.toPath(), krb5Conf.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);

    // This JVM's Kerberos reads our krb5.conf from now on.
    System.setProperty("java.security.krb5.conf", krb5Conf.getAbsolutePath());
    refreshKerberosConfig();
    System.err.println("minicluster: KDC " + kdcAddress() + " realm " + realm);
  }

  /** Makes the JDK and Hadoop read krb5.conf again (the KDC set its own path first). */
  static void refreshKerberosConfig() {
    try {
      Class<?> c = Class.forName("sun.security.krb5.Config");
      Method refresh = c.getMethod("refresh");
      refresh.invoke(null);
    } catch (Throwable t) {
      System.err.println("minicluster: could not refresh the Kerberos configuration: " + t);
    }
    try {
      Class<?> c = Class.forName(
          "org.apache.hadoop.security.authentication.util.KerberosName");
      c.getMethod("resetDefaultRealm").invoke(null);
    } catch (Throwable ignored) {
      // Hadoop 2.10 has no resetDefaultRealm; it reads the realm on first use.
    }
  }

  /** The security keys every daemon and client shares (core-site). */
  void applyCommon(Configuration conf) {
    conf.set("hadoop.security.authentication", "kerberos");
    conf.setBoolean("hadoop.security.authorization", true);
    conf.set("hadoop.rpc.protection", rpcProtection);
    // SPNEGO on the web servers: Hadoop 3's WebHDFS filter (AuthFilterInitializer) reads these
    // (2.10's reads the dfs.web.authentication keys below). "*": every HTTP/ principal of the
    // keytab, HTTP/localhost and HTTP/127.0.0.1.
    conf.set("hadoop.http.authentication.type", "kerberos");
    conf.set("hadoop.http.authentication.kerberos.principal", "*");
    conf.set("hadoop.http.authentication.kerberos.keytab", serviceKeytab.getAbsolutePath());
  }

  /**
   * Writes DIR/data/conf/core-site.xml with the common keys: the script puts DIR/data/conf on
   * the launcher's classpath, for the code in the daemons that reads a fresh Configuration
   * (as a real node reads HADOOP_CONF_DIR). The NodeManager's ContainerLocalizer does: run
   * in-process by DefaultContainerExecutor, it would otherwise ask the NodeManager for
   * authentication-only SASL while the NodeManager insists on --rpc-protection.
   */
  void writeClasspathConf() throws IOException {
    File confDir = new File(data, "conf");
    if (!confDir.isDirectory() && !confDir.mkdirs()) {
      throw new IOException("cannot create " + confDir);
    }
    Configuration c = new Configuration(false);
    applyCommon(c);
    File f = new File(confDir, "core-site.xml");
    File t = new File(confDir, "core-site.xml.tmp");
    try (java.io.OutputStream out = Files.newOutputStream(t.toPath())) {
      c.writeXml(out);
    }
    Files.move(t.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** HDFS: Kerberos RPC, block tokens, SPNEGO on WebHDFS, unprivileged DataNode ports. */
  void applyHdfs(Configuration conf) {
    String keytab = serviceKeytab.getAbsolutePath();
    conf.set("dfs.namenode.kerberos.principal", hdfsPrincipal());
    conf.set("dfs.namenode.keytab.file", keytab);
    conf.set("dfs.datanode.kerberos.principal", hdfsPrincipal());
    conf.set("dfs.datanode.keytab.file", keytab);
    // "*": every HTTP/ principal of the keytab (HTTP/localhost and HTTP/127.0.0.1).
    conf.set("dfs.web.authentication.kerberos.principal", "*");
    conf.set("dfs.web.authentication.kerberos.keytab", keytab);
    conf.set("dfs.namenode.kerberos.internal.spnego.principal", "*");
    conf.setBoolean("dfs.block.access.token.enable", true);
    // The DataNode on unprivileged ports without SASL on data transfer (clients send the
    // block token in the clear, as against a DataNode on privileged ports).
    conf.setBoolean("ignore.secure.ports.for.testing", true);
    conf.set("dfs.http.policy", "HTTP_ONLY");
    // --token-lifetime-s: delegation tokens die this long after they are issued, renewed or
    // not, and unrenewed after half of it (for tests of jobs that outlive their tokens).
    if (tokenLifetimeS > 0) {
      conf.setLong("dfs.namenode.delegation.token.max-lifetime", tokenLifetimeS * 1000);
      conf.setLong("dfs.namenode.delegation.token.renew-interval", tokenLifetimeS * 500);
    }
  }

  /** YARN: one principal for the ResourceManager and the NodeManager. */
  void applyYarn(Configuration conf) {
    String keytab = serviceKeytab.getAbsolutePath();
    conf.set("yarn.resourcemanager.principal", yarnPrincipal());
    conf.set("yarn.resourcemanager.keytab", keytab);
    conf.set("yarn.nodemanager.principal", yarnPrincipal());
    conf.set("yarn.nodemanager.keytab", keytab);
    conf.set("yarn.resourcemanager.webapp.spnego-principal", httpPrincipal());
    conf.set("yarn.resourcemanager.webapp.spnego-keytab-file", keytab);
    conf.set("yarn.nodemanager.webapp.spnego-principal", httpPrincipal());
    conf.set("yarn.nodemanager.webapp.spnego-keytab-file", keytab);
    conf.set("yarn.web-proxy.principal", httpPrincipal());
    conf.set("yarn.web-proxy.keytab", keytab);
    // Containers find the KDC through our krb5.conf, as a real node's /etc/krb5.conf.
    conf.set("yarn.nodemanager.admin-env",
        "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX,KRB5_CONFIG=" + krb5Conf.getAbsolutePath());
  }

  /**
   * Logs this JVM in as the YARN service principal (the login user, as which the
   * ResourceManager renews delegation tokens), before YARN starts.
   */
  UserGroupInformation loginAsYarn() throws IOException {
    UserGroupInformation.loginUserFromKeytab(yarnPrincipal(), serviceKeytab.getAbsolutePath());
    return UserGroupInformation.getLoginUser();
  }

  UserGroupInformation loginHdfs() throws IOException {
    return UserGroupInformation.loginUserFromKeytabAndReturnUGI(hdfsPrincipal(),
        serviceKeytab.getAbsolutePath());
  }

  UserGroupInformation loginTestUser() throws IOException {
    return UserGroupInformation.loginUserFromKeytabAndReturnUGI(userPrincipal(),
        userKeytab.getAbsolutePath());
  }

  /** The keys for DIR/minicluster.env. */
  void env(Map<String, String> env) {
    env.put("MINICLUSTER_SECURE", "true");
    env.put("MINICLUSTER_KRB5_CONF", krb5Conf.getAbsolutePath());
    env.put("MINICLUSTER_KDC", kdcAddress());
    env.put("MINICLUSTER_REALM", realm);
    env.put("MINICLUSTER_USER_PRINCIPAL", userPrincipal());
    env.put("MINICLUSTER_USER_KEYTAB", userKeytab.getAbsolutePath());
    env.put("MINICLUSTER_RPC_PROTECTION", rpcProtection);
    env.put("MINICLUSTER_TOKEN_LIFETIME_S", Long.toString(tokenLifetimeS));
    env.put("MINICLUSTER_HDFS_PRINCIPAL", hdfsPrincipal());
    env.put("MINICLUSTER_YARN_PRINCIPAL", yarnPrincipal());
    env.put("MINICLUSTER_HTTP_PRINCIPAL", httpPrincipal());
  }

  void stop() {
    if (kdc != null) {
      try {
        kdc.stop();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping the KDC: " + t);
      }
      kdc = null;
    }
  }

  private static void mkdirPrivate(File d) throws IOException {
    if (!d.isDirectory() && !d.mkdirs()) {
      throw new IOException("cannot create " + d);
    }
    Files.setPosixFilePermissions(d.toPath(), PosixFilePermissions.fromString("rwx------"));
  }

  private static void chmod600(File f) throws IOException {
    Files.setPosixFilePermissions(f.toPath(), PosixFilePermissions.fromString("rw-------"));
  }
}
