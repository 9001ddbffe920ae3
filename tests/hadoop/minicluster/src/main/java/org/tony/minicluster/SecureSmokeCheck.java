package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.LocalResourceType;
import org.apache.hadoop.yarn.api.records.LocalResourceVisibility;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.URL;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.io.DataOutputBuffer;
import java.nio.ByteBuffer;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * A smoke check of a --secure mini cluster, from a JVM of its own, as a client would do it:
 * reads DIR's site files and minicluster.env, logs in from DIR/user.keytab, lists the
 * RUNNING nodes (YARN RPC), writes and reads a file in HDFS (NameNode RPC, DataNode data
 * transfer with a block token), gets an HDFS delegation token for the ResourceManager as
 * renewer and renews it (as the ResourceManager would), and gets a YARN delegation token.
 * Prints "SECURE SMOKE CHECK OK" and exits 0, or exits 1.
 *
 * <pre>scripts/hadoop-minicluster check DIR</pre>
 */
public final class SecureSmokeCheck {

  private SecureSmokeCheck() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: SecureSmokeCheck DIR");
      System.exit(2);
    }
    File dir = new File(args[0]).getAbsoluteFile();
    try {
      run(dir);
      System.out.println("SECURE SMOKE CHECK OK");
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (Throwable t) {
      System.err.println("secure smoke check FAILED: " + t);
      t.printStackTrace();
      System.err.flush();
      Runtime.getRuntime().halt(1);
    }
  }

  private static Map<String, String> readEnv(File f) throws IOException {
    Map<String, String> env = new HashMap<>();
    for (String line : Files.readAllLines(f.toPath(), StandardCharsets.UTF_8)) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        env.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return env;
  }

  private static void run(File dir) throws Exception {
    Map<String, String> env = readEnv(new File(dir, "minicluster.env"));
    if (!"true".equals(env.get("MINICLUSTER_SECURE"))) {
      throw new IOException(dir + " is not a --secure mini cluster");
    }
    System.setProperty("java.security.krb5.conf", env.get("MINICLUSTER_KRB5_CONF"));

    // Only the site files: what any client of the cluster has.
    Configuration conf = new Configuration(false);
    for (String f : new String[] {"core-default.xml", "hdfs-default.xml", "yarn-default.xml"}) {
      conf.addResource(f);
    }
    for (String f : new String[] {"core-site.xml", "hdfs-site.xml", "yarn-site.xml"}) {
      conf.addResource(new Path(new File(dir, f).getAbsolutePath()));
    }
    String protection = conf.get("hadoop.rpc.protection");
    System.out.println("hadoop.security.authentication=" + conf.get("hadoop.security.authentication")
        + " hadoop.rpc.protection=" + protection);
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation ugi = UserGroupInformation.loginUserFromKeytabAndReturnUGI(
        env.get("MINICLUSTER_USER_PRINCIPAL"), env.get("MINICLUSTER_USER_KEYTAB"));
    System.out.println("logged in as " + ugi.getUserName() + " (" + ugi.getShortUserName()
        + ", " + ugi.getAuthenticationMethod() + ")");

    ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
      YarnClient yc = YarnClient.createYarnClient();
      yc.init(new YarnConfiguration(conf));
      yc.start();
      try {
        List<NodeReport> nodes = yc.getNodeReports(NodeState.RUNNING);
        System.out.println("YARN: " + nodes.size() + " RUNNING node(s)");
        for (NodeReport n : nodes) {
          System.out.println("  " + n.getNodeId() + " " + n.getCapability());
        }
        if (nodes.isEmpty()) {
          throw new IOException("no RUNNING NodeManager");
        }
        org.apache.hadoop.yarn.api.records.Token rmToken =
            yc.getRMDelegationToken(new Text(ugi.getShortUserName()));
        System.out.println("YARN: RM delegation token kind " + rmToken.getKind()
            + " service " + rmToken.getService());
      } finally {
        yc.stop();
      }

      FileSystem fs = FileSystem.newInstance(conf);
      try {
        Path p = new Path("/user/" + ugi.getShortUserName() + "/secure-smoke-check.txt");
        byte[] payload = new byte[3 * 1024 * 1024 + 17];
        for (int i = 0; i < payload.length; i++) {
          payload[i] = (byte) (i * 31 + 7);
        }
        try (FSDataOutputStream out = fs.create(p, true)) {
          out.write(payload);
        }
        byte[] back = new byte[payload.length];
        try (FSDataInputStream in = fs.open(p)) {
          in.readFully(back);
          if (in.read() != -1) {
            throw new IOException("read more than was written");
          }
        }
        if (!Arrays.equals(payload, back)) {
          throw new IOException("HDFS read back other bytes than it wrote");
        }
        System.out.println("HDFS: wrote and read back " + payload.length + " bytes at " + p
            + " (owner " + fs.getFileStatus(p).getOwner() + ")");

        // A delegation token as a YARN client would get it for its application: renewer
        // the ResourceManager's principal (its short name, yarn).
        String renewer = conf.get(YarnConfiguration.RM_PRINCIPAL);
        Credentials creds = new Credentials();
        Token<?>[] tokens = fs.addDelegationTokens(renewer, creds);
        if (tokens == null || tokens.length == 0) {
          throw new IOException("no HDFS delegation token");
        }
        for (Token<?> t : tokens) {
          System.out.println("HDFS: delegation token " + t.getKind() + " service "
              + t.getService() + " (renewer " + renewer + ")");
        }
        // Renewing takes the renewer's identity: log in as it, as the ResourceManager does.
        checkRenewal(conf, dir, env, tokens);
        // An application whose AM container localizes that file with the token.
        runApplication(conf, fs, p, creds);
        fs.delete(p, false);
      } finally {
        fs.close();
      }
      return null;
    });
  }

  /**
   * Submits an application whose AM (a shell command, one attempt) needs the HDFS file as a
   * local resource: the ResourceManager renews the HDFS token at submission (as yarn), and
   * the NodeManager localizes the file with it. The AM never registers, so the application
   * fails, but its container must have run and exited 0.
   */
  private static void runApplication(Configuration conf, FileSystem fs, Path file,
      Credentials creds) throws Exception {
    YarnClient yc = YarnClient.createYarnClient();
    yc.init(new YarnConfiguration(conf));
    yc.start();
    try {
      YarnClientApplication app = yc.createApplication();
      ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
      ApplicationId id = ctx.getApplicationId();
      ctx.setApplicationName("secure-smoke-check");
      ctx.setMaxAppAttempts(1);
      ctx.setResource(Resource.newInstance(128, 1));
      FileStatus st = fs.getFileStatus(file);
      LocalResource res = LocalResource.newInstance(URL.fromPath(fs.makeQualified(file)),
          LocalResourceType.FILE, LocalResourceVisibility.APPLICATION, st.getLen(),
          st.getModificationTime());
      Map<String, LocalResource> resources = new HashMap<>();
      resources.put("smoke.bin", res);
      String cmd = "test -s smoke.bin && echo localized > "
          + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stdout";
      DataOutputBuffer dob = new DataOutputBuffer();
      creds.writeTokenStorageToStream(dob);
      ContainerLaunchContext clc = ContainerLaunchContext.newInstance(resources,
          new HashMap<>(), Arrays.asList(cmd), null,
          ByteBuffer.wrap(dob.getData(), 0, dob.getLength()), null);
      ctx.setAMContainerSpec(clc);
      yc.submitApplication(ctx);
      System.out.println("YARN: submitted " + id);
      long deadline = System.nanoTime() + 90_000_000_000L;
      ApplicationReport r;
      while (true) {
        r = yc.getApplicationReport(id);
        YarnApplicationState s = r.getYarnApplicationState();
        if (s == YarnApplicationState.FINISHED || s == YarnApplicationState.FAILED
            || s == YarnApplicationState.KILLED) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IOException(id + " still " + s + " after 90 s");
        }
        Thread.sleep(250);
      }
      String diag = r.getDiagnostics();
      System.out.println("YARN: " + id + " " + r.getYarnApplicationState() + ": "
          + diag.replace('\n', ' '));
      if (!diag.contains("exitCode: 0")) {
        throw new IOException("the AM container did not run and exit 0");
      }
      System.out.println("YARN: the AM container localized the HDFS file and exited 0");
    } finally {
      yc.stop();
    }
  }

  /** Renews the tokens as the ResourceManager's principal (DIR/data/keytabs). */
  private static void checkRenewal(Configuration conf, File dir, Map<String, String> env,
      Token<?>[] tokens) throws Exception {
    File keytab = new File(dir, "data/keytabs/services.keytab");
    if (!keytab.canRead()) {
      System.out.println("HDFS: renewal not checked (no service keytab readable)");
      return;
    }
    UserGroupInformation rm = UserGroupInformation.loginUserFromKeytabAndReturnUGI(
        env.get("MINICLUSTER_YARN_PRINCIPAL"), keytab.getAbsolutePath());
    rm.doAs((PrivilegedExceptionAction<Void>) () -> {
      for (Token<?> t : tokens) {
        long expiry = t.renew(conf);
        System.out.println("HDFS: renewed as " + rm.getShortUserName() + ", expires " + expiry);
      }
      return null;
    });
  }
}
