package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.security.PrivilegedExceptionAction;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.webproxy.WebAppProxyServer;

import sun.misc.Signal;

/**
 * Starts a real HDFS (MiniDFSCluster) and YARN (MiniYARNCluster) on 127.0.0.1
 * with ephemeral ports for tony's yarn-backend tests, writes the live client
 * configuration as core-site.xml, hdfs-site.xml and yarn-site.xml into DIR,
 * prints "MINICLUSTER READY DIR" on stdout once every NodeManager is RUNNING
 * in the ResourceManager, and stops cleanly (exit 0) on SIGTERM or SIGINT.
 *
 * <pre>
 * MiniClusterLauncher DIR [--nodemanagers N] [--gpus G] [--nm-memory-mb M]
 *                         [--nm-vcores V] [--max-lifetime-s S]
 *                         [--secure [--rpc-protection authentication|integrity|privacy]
 *                                   [--token-lifetime-s S]] [--rm-ha | --ha] [--https] [--viewfs]
 *                         [--kms] [--preemption] [--placement]
 * </pre>
 *
 * With --rm-ha, two ResourceManagers (rm1, rm2) in HA without automatic failover, recovery and
 * work-preserving restart on, and one state store both read (FileSystemRMStateStore under
 * DIR/data/rmstore); rm1 starts active. The site files then name each RM by its id only. While it
 * runs, a file DIR/control/NAME.request holding "failover-rm" or "restart-rm" makes the standby
 * RM active, or restarts the active one (a new ResourceManager that recovers the state); the
 * launcher answers in NAME.done ("OK ..." or "ERROR ...") once the new active RM serves every
 * NodeManager. The web proxy runs on its own (yarn.web-proxy.address), in front of the active RM.
 *
 * With --ha, --rm-ha and HDFS in HA as well: one nameservice (minidfs-ns) of two NameNodes (nn1
 * active at start, nn2) with shared edits, fs.defaultFS hdfs://minidfs-ns, and site files that
 * name each NameNode by its id only (see NameNodeHa). The control files take "failover-nn" (the
 * standby NameNode becomes active), "standby-nn" (both standby) and "activate-nn" too.
 *
 * With --https, every web endpoint of HDFS and YARN serves HTTPS only, with a certificate of a
 * test CA; DIR gets ssl-client.xml, truststore.jks and ca.pem (see HttpsMode).
 *
 * With --viewfs, HDFS is federated over two NameNodes and the clients' default file system is a
 * ViewFS mount table over both (see ViewFsMode).
 *
 * With --kms, a Key Management Server (Hadoop's MiniKMS) and an encryption zone, /ez, with one
 * file in it (see KmsMode). Not with --ha or --viewfs.
 *
 * With --preemption, the CapacityScheduler has two queues, default and urgent, each guaranteed half
 * the cluster, and takes back from one what the other waits for (see PreemptionMode).
 *
 * With --placement, the CapacityScheduler places SchedulingRequests under their constraints, only
 * NodeManager 0 has GPUs and only the last one has the node label tony-labelled (see
 * PlacementMode). Not with --secure, --rm-ha, --ha or --preemption.
 *
 * Such a cluster, and an --rm-ha one, takes "stop-nm I" in the control files (below): NodeManager I
 * stops, its containers are killed and reported lost, as when a node leaves (see PreemptionMode).
 * A --preemption one takes "kill-nm I" too: NodeManager I goes silent, as when its process is
 * killed, with its containers running on; the RM counts it lost 10 s later.
 *
 * With --secure, a KDC starts first and HDFS and YARN run Kerberized (see SecureMode);
 * DIR also gets krb5.conf and user.keytab, and minicluster.env the MINICLUSTER_KRB5_CONF,
 * MINICLUSTER_USER_PRINCIPAL, ... keys.
 *
 * Everything the cluster writes lies under DIR/data. Test code only.
 */
public final class MiniClusterLauncher {

  /** The GPU resource type, as YARN names it. */
  static final String GPU = "yarn.io/gpu";

  private static final String LOOPBACK = "127.0.0.1";

  private static final class Options {
    File dir;
    int nodeManagers = 1;
    long gpus = 4;
    int nmMemoryMb = 8192;
    int nmVcores = 8;
    long maxLifetimeS = 0; // 0: no limit
    long readyTimeoutS = 240;
    boolean secure;
    String rpcProtection; // null: not given
    long tokenLifetimeS = 0; // 0: HDFS's defaults (7 days, renewed daily)
    boolean rmHa;
    boolean nnHa;
    boolean https;
    boolean viewfs;
    boolean kms;
    boolean preemption;
    boolean placement;
  }

  /** The ResourceManagers' ids with --rm-ha. */
  private static final String[] RM_IDS = {"rm1", "rm2"};

  private final Options opt;
  private final File data;
  private MiniDFSCluster dfs;
  private MiniYARNCluster yarn;
  /** The CapacityScheduler's settings, as the ResourceManager started with them. */
  private Configuration capacityConf;
  /** The web proxy of an --rm-ha cluster; null without. */
  private WebAppProxyServer proxy;
  /** The Kerberized mode's KDC and keys; null without --secure. */
  private SecureMode secure;
  /** The HTTPS mode's keys; null without --https. */
  private HttpsMode https;
  /** The KMS; null without --kms. */
  private KmsMode kms;
  /** The user the tests run as (the OS user, and in secure mode the user principal's name). */
  private String testUser;
  private final AtomicBoolean stopped = new AtomicBoolean(false);
  private final PortRegistry ports;

  private MiniClusterLauncher(Options opt) throws IOException {
    this.opt = opt;
    this.data = new File(opt.dir, "data");
    this.ports = new PortRegistry();
  }

  public static void main(String[] args) throws Exception {
    Options opt;
    try {
      opt = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("minicluster: " + e.getMessage());
      System.err.println("usage: MiniClusterLauncher DIR [--nodemanagers N] [--gpus G]"
          + " [--nm-memory-mb M] [--nm-vcores V] [--max-lifetime-s S] [--ready-timeout-s S]"
          + " [--secure [--rpc-protection authentication|integrity|privacy]] [--rm-ha | --ha]"
          + " [--https] [--viewfs] [--kms] [--preemption] [--placement]");
      System.exit(2);
      return;
    }
    MiniClusterLauncher launcher = new MiniClusterLauncher(opt);

    CountDownLatch stop = new CountDownLatch(1);
    for (String sig : new String[] {"TERM", "INT", "HUP"}) {
      Signal.handle(new Signal(sig), s -> stop.countDown());
    }
    // Any other way out of the JVM (an uncaught error, System.exit) still
    // stops the daemons, so no container process outlives us.
    Runtime.getRuntime().addShutdownHook(new Thread(launcher::stopQuietly, "minicluster-stop"));

    try {
      launcher.start();
    } catch (Throwable t) {
      System.err.println("minicluster: failed to start: " + t);
      t.printStackTrace();
      launcher.stopQuietly();
      System.out.flush();
      Runtime.getRuntime().halt(1);
    }
    // The control files are served before READY: a command may follow at once.
    launcher.startControl(stop);
    System.out.println("MINICLUSTER READY " + opt.dir.getAbsolutePath());
    System.out.flush();

    if (opt.maxLifetimeS > 0) {
      if (!stop.await(opt.maxLifetimeS, TimeUnit.SECONDS)) {
        System.err.println("minicluster: max lifetime of " + opt.maxLifetimeS
            + " s reached, stopping");
      }
    } else {
      stop.await();
    }
    // A watchdog, so that a stuck stop can never hang the caller.
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(60_000);
        System.err.println("minicluster: stop took over 60 s, halting");
        Runtime.getRuntime().halt(3);
      } catch (InterruptedException ignored) {
        // done in time
      }
    }, "minicluster-stop-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    launcher.stopQuietly();
    System.err.println("minicluster: stopped");
    System.err.flush();
    Runtime.getRuntime().halt(0);
  }

  private static Options parse(String[] args) {
    Options o = new Options();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--secure")) {
        o.secure = true;
      } else if (a.equals("--rm-ha")) {
        o.rmHa = true;
      } else if (a.equals("--https")) {
        o.https = true;
      } else if (a.equals("--viewfs")) {
        o.viewfs = true;
      } else if (a.equals("--kms")) {
        o.kms = true;
      } else if (a.equals("--preemption")) {
        o.preemption = true;
      } else if (a.equals("--placement")) {
        o.placement = true;
      } else if (a.equals("--ha")) {
        o.rmHa = true;
        o.nnHa = true;
      } else if (a.startsWith("--")) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        String v = args[++i];
        try {
          switch (a) {
            case "--nodemanagers": o.nodeManagers = Integer.parseInt(v); break;
            case "--gpus": o.gpus = Long.parseLong(v); break;
            case "--nm-memory-mb": o.nmMemoryMb = Integer.parseInt(v); break;
            case "--nm-vcores": o.nmVcores = Integer.parseInt(v); break;
            case "--max-lifetime-s": o.maxLifetimeS = Long.parseLong(v); break;
            case "--ready-timeout-s": o.readyTimeoutS = Long.parseLong(v); break;
            case "--rpc-protection": o.rpcProtection = v; break;
            case "--token-lifetime-s": o.tokenLifetimeS = Long.parseLong(v); break;
            default: throw new IllegalArgumentException("unknown option " + a);
          }
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(a + ": not a number: " + v);
        }
      } else if (o.dir == null) {
        o.dir = new File(a).getAbsoluteFile();
      } else {
        throw new IllegalArgumentException("unexpected argument " + a);
      }
    }
    if (o.dir == null) {
      throw new IllegalArgumentException("DIR is required");
    }
    if (o.nodeManagers < 1 || o.gpus < 0 || o.nmMemoryMb < 256 || o.nmVcores < 1) {
      throw new IllegalArgumentException("bad sizes");
    }
    if (o.rpcProtection != null) {
      if (!o.secure) {
        throw new IllegalArgumentException("--rpc-protection needs --secure");
      }
      if (!o.rpcProtection.matches("authentication|integrity|privacy")) {
        throw new IllegalArgumentException(
            "--rpc-protection: authentication, integrity or privacy, not " + o.rpcProtection);
      }
    } else if (o.secure) {
      o.rpcProtection = "authentication";
    }
    if (o.viewfs && o.nnHa) {
      throw new IllegalArgumentException("--viewfs and --ha do not go together (yet)");
    }
    if (o.kms && (o.viewfs || o.nnHa)) {
      throw new IllegalArgumentException("--kms goes with neither --ha nor --viewfs (yet)");
    }
    if (o.placement && (o.secure || o.rmHa || o.preemption)) {
      throw new IllegalArgumentException(
          "--placement goes with none of --secure, --rm-ha, --ha, --preemption (yet)");
    }
    if (o.tokenLifetimeS != 0 && (!o.secure || o.tokenLifetimeS < 4)) {
      throw new IllegalArgumentException("--token-lifetime-s needs --secure and at least 4 s");
    }
    return o;
  }

  private void start() throws Exception {
    if (!data.isDirectory() && !data.mkdirs()) {
      throw new IOException("cannot create " + data);
    }
    File tmp = new File(data, "tmp");
    File logs = new File(data, "logs");
    tmp.mkdirs();
    logs.mkdirs();
    // Where MiniYARNCluster puts its work dir (GenericTestUtils.getTestDir),
    // and where daemons put logs: all under DIR/data.
    System.setProperty("test.build.data", new File(data, "yarn").getAbsolutePath());
    System.setProperty("hadoop.log.dir", logs.getAbsolutePath());
    System.setProperty("yarn.log.dir", logs.getAbsolutePath());

    Configuration conf = new Configuration();
    conf.set("hadoop.tmp.dir", tmp.getAbsolutePath());
    if (opt.secure) {
      testUser = System.getProperty("user.name");
      // The KDC first: the JVM's Kerberos configuration must be ours before any login.
      secure = new SecureMode(opt.dir, data, opt.rpcProtection, testUser, opt.tokenLifetimeS);
      secure.startKdc();
      secure.writeClasspathConf();
      secure.applyCommon(conf);
    } else {
      conf.set("hadoop.security.authentication", "simple");
      conf.setBoolean("hadoop.security.authorization", false);
    }
    if (opt.https) {
      https = new HttpsMode(opt.dir, data);
      https.createKeys();
      https.writeConf(new File(data, "conf"));
      https.apply(conf);
    }
    if (opt.kms) {
      // Before HDFS: the NameNode asks the KMS for the zone's keys.
      kms = new KmsMode(data);
      kms.start(secure, opt.tokenLifetimeS, 120);
      kms.apply(conf);
    }
    UserGroupInformation.setConfiguration(conf);
    if (secure == null) {
      testUser = UserGroupInformation.getCurrentUser().getShortUserName();
    }

    if (secure == null) {
      startHdfs(conf);
      startYarn(conf);
      waitForNodes();
      if (opt.placement) {
        PlacementMode.configureNodes(yarn, yarn.getResourceManager(), opt.nodeManagers, data,
            capacityConf, opt.readyTimeoutS);
      }
    } else {
      // Each side in a doAs of its own principal: the threads its daemons start inherit it,
      // and their RPC servers take their Kerberos identity from it (see SecureMode).
      secure.loginHdfs().doAs((PrivilegedExceptionAction<Void>) () -> {
        startHdfs(conf);
        return null;
      });
      secure.loginAsYarn().doAs((PrivilegedExceptionAction<Void>) () -> {
        startYarn(conf);
        return null;
      });
      // As the test user, with a ticket from its keytab: the way a test comes in.
      secure.loginTestUser().doAs((PrivilegedExceptionAction<Void>) () -> {
        waitForNodes();
        return null;
      });
    }
    writeSiteFiles();
  }

  // ---------------------------------------------------------------- HDFS

  private void startHdfs(Configuration base) throws Exception {
    Configuration conf = new Configuration(base);
    conf.setBoolean("dfs.permissions.enabled", false);
    conf.setBoolean("dfs.webhdfs.enabled", true);
    conf.setInt("dfs.replication", 1);
    conf.setLong("dfs.blocksize", 16L * 1024 * 1024);
    conf.set("dfs.namenode.rpc-bind-host", LOOPBACK);
    conf.set("dfs.namenode.http-bind-host", LOOPBACK);
    // The DataNode is told to clients by IP (127.0.0.1), never by a name.
    conf.setBoolean("dfs.client.use.datanode.hostname", false);
    conf.setBoolean("dfs.datanode.use.datanode.hostname", false);
    if (secure != null) {
      secure.applyHdfs(conf);
    }
    if (https != null) {
      // Over the secure mode's HTTP_ONLY.
      https.apply(conf);
      if (secure != null) {
        // A secure DataNode on unprivileged ports with HTTPS_ONLY: Hadoop's production setup,
        // SASL on data transfer (the plain secure mode goes without it, for testing).
        conf.set("dfs.data.transfer.protection", "authentication");
      }
    }

    MiniDFSCluster.Builder builder = new MiniDFSCluster.Builder(conf, new File(data, "dfs"))
        .numDataNodes(1)
        .format(true)
        .manageNameDfsDirs(true)
        .manageDataDfsDirs(true)
        .waitSafeMode(true);
    if (opt.nnHa) {
      // The standby reads the shared edits every second, as a real one does every few.
      conf.set("dfs.ha.tail-edits.period", "1");
      builder.nnTopology(NameNodeHa.topology());
      if (https != null) {
        // MiniDFSCluster gives each NameNode of the topology an HTTP address only.
        for (String id : NameNodeHa.IDS) {
          conf.set("dfs.namenode.https-address." + NameNodeHa.NAMESERVICE + "." + id,
              LOOPBACK + ":" + freePort());
        }
      }
    }
    if (opt.viewfs) {
      builder.nnTopology(ViewFsMode.topology());
      if (https != null) {
        for (String ns : ViewFsMode.NAMESERVICES) {
          conf.set("dfs.namenode.https-address." + ns, LOOPBACK + ":" + freePort());
        }
      }
    }
    dfs = builder.build();
    dfs.waitActive();
    // What the daemons of this JVM read from the classpath (a NodeManager's localizer) must know
    // the nameservice, and how to talk to a DataNode that wants SASL.
    TreeMap<String, String> site = new TreeMap<>();
    if (opt.nnHa) {
      dfs.transitionToActive(0);
      site.putAll(NameNodeHa.clientKeys(dfs, https != null));
      site.remove("fs.defaultFS");
    }
    if (opt.viewfs) {
      site.putAll(ViewFsMode.clientKeys(dfs, https != null));
      site.remove("fs.defaultFS");
    }
    if (conf.get("dfs.data.transfer.protection") != null) {
      site.put("dfs.data.transfer.protection", conf.get("dfs.data.transfer.protection"));
    }
    if (!site.isEmpty()) {
      writeClasspathXml("hdfs-site.xml", site);
    }
    dfs.waitClusterUp();

    // The usual directories of a fresh cluster (in secure mode as hdfs/localhost, whose short
    // name, hdfs, the NameNode took as its superuser).
    FileSystem fs = dfs.getFileSystem(0);
    Path tmp = new Path("/tmp");
    fs.mkdirs(tmp);
    fs.setPermission(tmp, new FsPermission((short) 01777));
    Path home = new Path("/user/" + testUser);
    fs.mkdirs(home);
    if (secure != null) {
      fs.setOwner(home, testUser, null);
    }
    if (opt.viewfs) {
      // What the mount table puts on the second NameNode: /data, and (the fallback) its root.
      FileSystem second = dfs.getFileSystem(1);
      Path dataDir = new Path("/data");
      second.mkdirs(dataDir);
      second.setPermission(dataDir, new FsPermission((short) 01777));
      second.setPermission(new Path("/"), new FsPermission((short) 01777));
    }
    if (kms != null) {
      kms.createZone(fs, conf);
    }
  }

  // ---------------------------------------------------------------- YARN

  private void startYarn(Configuration base) throws Exception {
    // Starts from the live HDFS configuration, so it has the real fs.defaultFS.
    YarnConfiguration conf = new YarnConfiguration(dfs.getConfiguration(0));
    if (opt.viewfs) {
      // The daemons' own default is the first NameNode; they know both (the RM renews the tokens
      // of each).
      for (Map.Entry<String, String> e : ViewFsMode.clientKeys(dfs, https != null).entrySet()) {
        conf.set(e.getKey(), e.getValue());
      }
      conf.set("fs.defaultFS", ViewFsMode.uri(dfs, 0));
    } else if (!opt.nnHa) {
      conf.set("fs.defaultFS", dfs.getURI().toString());
    } else {
      // The RM renews HDFS tokens and the NodeManagers localize through the nameservice.
      for (Map.Entry<String, String> e : NameNodeHa.clientKeys(dfs, https != null).entrySet()) {
        conf.set(e.getKey(), e.getValue());
      }
    }
    if (secure != null) {
      secure.applyYarn(conf);
    }

    // Our own loopback addresses with ephemeral ports (MiniYARNCluster would
    // otherwise pick "localhost:0" itself).
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.set(YarnConfiguration.RM_HOSTNAME, LOOPBACK);
    conf.set(YarnConfiguration.RM_ADDRESS, LOOPBACK + ":0");
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, LOOPBACK + ":0");
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, LOOPBACK + ":0");
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, LOOPBACK + ":0");
    // Not port 0: the RM computes the web proxy's address (every application's tracking URL) from
    // this setting before the web app binds, and keeps it.
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, LOOPBACK + ":" + freePort());
    // With --https, the same for the HTTPS web app, the one the RM serves (and links to) then.
    conf.set(YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS,
        LOOPBACK + ":" + (https != null ? freePort() : 0));
    conf.set("yarn.http.policy", https != null ? "HTTPS_ONLY" : "HTTP_ONLY");
    if (opt.rmHa) {
      // Two RMs in this JVM, each with ports of its own under its id (fixed, as the other RM, the
      // NodeManagers and the clients must know them before they bind). No ZooKeeper: failover is
      // by hand (the control files), and the state store is a directory both RMs read.
      conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
      conf.set(YarnConfiguration.RM_HA_IDS, String.join(",", RM_IDS));
      conf.set(YarnConfiguration.RM_CLUSTER_ID, "tony-minicluster");
      conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, false);
      // NodeManagers over RPC, failing over as a real one does (in-process ones keep calling the
      // RM that was active when they started).
      conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
      for (String id : RM_IDS) {
        for (String key : new String[] {YarnConfiguration.RM_ADDRESS,
            YarnConfiguration.RM_SCHEDULER_ADDRESS, YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
            YarnConfiguration.RM_ADMIN_ADDRESS, YarnConfiguration.RM_WEBAPP_ADDRESS,
            YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS}) {
          conf.set(HAUtil.addSuffix(key, id), LOOPBACK + ":" + freePort());
        }
        conf.set(HAUtil.addSuffix(YarnConfiguration.RM_HOSTNAME, id), LOOPBACK);
      }
      conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
      conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
      conf.set(YarnConfiguration.RM_STORE,
          "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore");
      conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI,
          new File(data, "rmstore").toURI().toString());
      // The web proxy on its own (as many production clusters run it), in front of whichever RM
      // is active: the RMs' own proxies would each know only their own applications, and the
      // tracking URL an RM hands out would name it even once it is standby.
      conf.set(YarnConfiguration.PROXY_ADDRESS, LOOPBACK + ":" + freePort());
      // Clients try each RM a few times, quickly (the defaults wait up to 15 minutes).
      conf.setInt("yarn.client.failover-max-attempts", 20);
      conf.setLong("yarn.client.failover-sleep-base-ms", 100);
      conf.setLong("yarn.client.failover-sleep-max-ms", 1000);
    }
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);

    // Sizes: a small machine. The minicluster reads NM memory from its own key.
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, opt.nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, opt.nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_VCORES, opt.nmVcores);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 64);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, opt.nmMemoryMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, opt.nmVcores);

    // GPUs: a plain countable resource type with a static amount per NM.
    // No yarn.nodemanager.resource-plugins, so no real GPU is looked for.
    if (opt.gpus > 0) {
      conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
      conf.set(YarnConfiguration.NM_RESOURCES_PREFIX + GPU, Long.toString(opt.gpus));
    }

    // Capacity scheduler, one queue, AMs may use the whole queue, and every
    // resource type (GPUs too) counts when fitting containers.
    Configuration capacity = new Configuration(false);
    capacity.set("yarn.scheduler.capacity.root.queues", "default");
    capacity.set("yarn.scheduler.capacity.root.default.capacity", "100");
    capacity.set("yarn.scheduler.capacity.root.default.maximum-capacity", "100");
    capacity.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0");
    capacity.set("yarn.scheduler.capacity.root.default.maximum-am-resource-percent", "1.0");
    if (opt.preemption) {
      PreemptionMode.applyQueues(capacity);
      PreemptionMode.applyMonitor(conf);
      PreemptionMode.applyNodeExpiry(conf);
      // NodeManagers over RPC, as with --rm-ha: one that stops unregisters from the RM (the
      // in-process ones' unregistration reaches no RM), which reports its containers lost. They
      // must know the RM's tracker address before it binds.
      conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
      conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, LOOPBACK + ":" + freePort());
    }
    capacity.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    if (opt.placement) {
      PlacementMode.apply(conf, data);
    }
    capacityConf = capacity;
    for (Map.Entry<String, String> e : capacity) {
      conf.set(e.getKey(), e.getValue());
    }
    // Application priorities up to 10 (the default maximum, 0, would cap every priority to 0).
    conf.setInt("yarn.cluster.max-application-priority", 10);

    // The NodeManager on a small, possibly rather full disk.
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.9f);
    conf.setLong(YarnConfiguration.NM_MIN_PER_DISK_FREE_SPACE_MB, 0);

    // Memory: enforce physical memory like a real cluster; never virtual.
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_CONTROL_RESOURCE_MONITORING, true);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, true);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);

    // Quicker than the defaults, so tests allocate and finish faster.
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 250);
    conf.setLong(YarnConfiguration.NM_SLEEP_DELAY_BEFORE_SIGKILL_MS, 250);
    // On NM shutdown it waits sigkill-delay + this + 1 s for applications to
    // leave its context, which finished ones (their logs kept) never do.
    conf.setLong(YarnConfiguration.NM_PROCESS_KILL_WAIT_MS, 2000);
    // Physical memory is enforced by the NodeManager's own polling, as on clusters without
    // cgroups, every second (tests rely on it); virtual memory is not, as on most production
    // clusters (its 2.1x default ratio kills ordinary Python processes). Hadoop 3 leaves the
    // polling check to cgroups unless memory.enforced is off (the key is unknown to 2.10, which
    // always polls).
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, true);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean("yarn.nodemanager.resource.memory.enforced", false);
    conf.setLong("yarn.nodemanager.container-monitor.interval-ms", 1000);

    // Without the NodeManagers' web servers: GuiceFilter is static, so the
    // last web app started in this JVM would take every request, and the
    // ResourceManager's REST API (/ws/v1/cluster) would answer 404.
    // The constructor with the number of ResourceManagers (1): the one Hadoop 2.10 has too.
    // On 2.10 (Guice 3, whose GuiceFilter is static) the NodeManager's web app takes the RM's
    // Guice requests as well, so the RM's UI and REST API answer 404 there; its web proxy
    // (/proxy/<app>) and RPC are unaffected.
    if (opt.rmHa) {
      // An RM that becomes active reloads its settings (queues, maximum allocations) from
      // yarn-site.xml and capacity-scheduler.xml on the classpath (DIR/data/conf), not from the
      // configuration it was started with: they must say the same.
      TreeMap<String, String> site = new TreeMap<>();
      collect(conf, site);
      site.keySet().removeIf(k -> !k.startsWith("yarn."));
      // For what reads a plain new YarnConfiguration in this JVM (the proxy's servlet): both RMs
      // listen on 127.0.0.1, so without an id Hadoop cannot tell which one is "this" one. The RMs
      // set theirs over it.
      site.put(YarnConfiguration.RM_HA_ID, RM_IDS[0]);
      writeClasspathXml("yarn-site.xml", site);
      TreeMap<String, String> scheduler = new TreeMap<>();
      collect(capacity, scheduler);
      writeClasspathXml("capacity-scheduler.xml", scheduler);
    }
    yarn = new MiniYARNCluster("tony-minicluster", opt.rmHa ? RM_IDS.length : 1,
        opt.nodeManagers, 1, 1, false);
    yarn.init(conf);
    yarn.start();
    if (opt.rmHa) {
      proxy = new WebAppProxyServer();
      YarnConfiguration proxyConf = new YarnConfiguration(conf);
      // Both RMs listen on 127.0.0.1: an id, or Hadoop cannot tell which is "this" one. Its
      // client of the RMs fails over between both all the same.
      proxyConf.set(YarnConfiguration.RM_HA_ID, RM_IDS[0]);
      if (secure != null) {
        // The proxy logs in with its principal, and that login is the JVM's: as HTTP/, the RMs'
        // token renewer (which renews as the login user) would be refused by the NameNode, since
        // the job's HDFS tokens name yarn as their renewer.
        proxyConf.set(YarnConfiguration.PROXY_PRINCIPAL, secure.yarnPrincipal());
      }
      proxy.init(proxyConf);
      proxy.start();
    }
  }

  /** Writes DIR/data/conf/NAME (on the daemons' classpath). */
  private void writeClasspathXml(String name, Map<String, String> props) throws IOException {
    File confDir = new File(data, "conf");
    if (!confDir.isDirectory() && !confDir.mkdirs()) {
      throw new IOException("cannot create " + confDir);
    }
    writeXml(new File(confDir, name), props);
  }

  /**
   * A port for an address that must be known before its server binds (a standby RM binds its
   * ports only once it is active), free now and kept from other miniclusters until this one stops.
   */
  private int freePort() throws IOException {
    return ports.claim(LOOPBACK);
  }

  private void waitForNodes() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(opt.readyTimeoutS);
    YarnClient client = YarnClient.createYarnClient();
    client.init(new YarnConfiguration(yarnConfig()));
    client.start();
    try {
      String last = "";
      while (true) {
        List<NodeReport> nodes = client.getNodeReports(NodeState.RUNNING);
        int ready = 0;
        StringBuilder desc = new StringBuilder();
        for (NodeReport n : nodes) {
          long g = 0;
          for (ResourceInformation ri : n.getCapability().getResources()) {
            if (GPU.equals(ri.getName())) {
              g = ri.getValue();
            }
          }
          desc.append(' ').append(n.getNodeId()).append(' ').append(n.getCapability());
          if (g >= opt.gpus) {
            ready++;
          }
        }
        if (!desc.toString().equals(last)) {
          System.err.println("minicluster: RUNNING nodes:" + desc);
          last = desc.toString();
        }
        if (ready >= opt.nodeManagers) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("only " + ready + " of " + opt.nodeManagers
              + " NodeManagers RUNNING with " + opt.gpus + " GPUs after "
              + opt.readyTimeoutS + " s");
        }
        Thread.sleep(100);
      }
    } finally {
      client.stop();
    }
  }

  /** The ResourceManager's live configuration (it has the bound ports). */
  private Configuration yarnConfig() {
    return yarn.getResourceManager().getConfig();
  }

  // ------------------------------------------------------------ site files

  private void writeSiteFiles() throws IOException {
    // Every key that is not a plain default, from the live configurations;
    // HDFS first, then YARN (the ResourceManager's, with its bound ports).
    TreeMap<String, String> all = new TreeMap<>();
    collect(dfs.getConfiguration(0), all);
    collect(yarn.getConfig(), all);
    collect(yarnConfig(), all);
    if (opt.nnHa) {
      // Each NameNode under its id, no single-NameNode address, nothing of one NameNode's own.
      all.keySet().removeIf(NameNodeHa::isServerSideKey);
      all.putAll(NameNodeHa.clientKeys(dfs, https != null));
    } else if (opt.viewfs) {
      all.keySet().removeIf(ViewFsMode::isServerSideKey);
      all.putAll(ViewFsMode.clientKeys(dfs, https != null));
    } else {
      all.put("fs.defaultFS", dfs.getURI().toString());
      if (https == null) {
        all.put("dfs.namenode.http-address",
            LOOPBACK + ":" + dfs.getNameNode().getHttpAddress().getPort());
      } else {
        // HTTPS_ONLY: no HTTP server; the HTTPS one's bound address.
        all.remove("dfs.namenode.http-address");
        all.put("dfs.namenode.https-address",
            LOOPBACK + ":" + dfs.getNameNode().getHttpsAddress().getPort());
      }
      all.put("dfs.namenode.rpc-address", dfs.getNameNode().getNameNodeAddressHostPortString());
    }
    // Internal to the launcher or the test harness, or a path of one DataNode.
    all.keySet().removeIf(k -> k.startsWith("hdfs.minidfs.")
        || k.startsWith("yarn.minicluster.") || k.equals("yarn.is.minicluster")
        || k.startsWith("dfs.datanode.") || k.startsWith("yarn.nodemanager.local-dirs")
        || k.startsWith("yarn.nodemanager.log-dirs") || k.startsWith("rpc.engine.")
        || k.startsWith("mapreduce.") || k.equals("net.topology.node.switch.mapping.impl")
        || k.equals("yarn.node-attribute.fs-store.root-dir")
        || k.equals("dfs.namenode.startup") || k.equals("dfs.namenode.name.dir")
        || k.equals("dfs.namenode.checkpoint.dir"));
    if (secure != null) {
      // A client checks a DataNode's principal (ClientDatanodeProtocol) against this key.
      all.put("dfs.datanode.kerberos.principal", secure.hdfsPrincipal());
    }
    if (opt.rmHa) {
      // What an HA cluster's clients get: each RM under its id, no single-server address, and
      // not the id of the RM whose configuration this was.
      all.keySet().removeIf(k -> k.equals(YarnConfiguration.RM_HA_ID)
          || k.equals(YarnConfiguration.RM_HOSTNAME)
          || (k.startsWith("yarn.resourcemanager.") && k.endsWith(".address")));
    }
    // Hadoop writes a bound 127.0.0.1 back as "localhost"; clients get the
    // address itself, so no name has to resolve (nor to ::1).
    all.replaceAll((k, v) -> v.replaceAll("(^|[/,])localhost:", "$1" + LOOPBACK + ":"));

    TreeMap<String, String> core = new TreeMap<>();
    TreeMap<String, String> hdfs = new TreeMap<>();
    TreeMap<String, String> yarnSite = new TreeMap<>();
    for (Map.Entry<String, String> e : all.entrySet()) {
      String k = e.getKey();
      if (k.startsWith("yarn.")) {
        yarnSite.put(k, e.getValue());
      } else if (k.startsWith("dfs.") || k.startsWith("hdfs.")) {
        hdfs.put(k, e.getValue());
      } else {
        core.put(k, e.getValue());
      }
    }
    writeXml(new File(opt.dir, "core-site.xml"), core);
    writeXml(new File(opt.dir, "hdfs-site.xml"), hdfs);
    writeXml(new File(opt.dir, "yarn-site.xml"), yarnSite);

    // The same addresses for shell scripts: KEY=value lines.
    TreeMap<String, String> env = new TreeMap<>();
    env.put("MINICLUSTER_FS_DEFAULTFS", all.get("fs.defaultFS"));
    if (opt.nnHa) {
      env.put("MINICLUSTER_NAMESERVICE", NameNodeHa.NAMESERVICE);
      env.put("MINICLUSTER_NN_HA_IDS", String.join(",", NameNodeHa.IDS));
      for (String id : NameNodeHa.IDS) {
        String upper = id.toUpperCase(java.util.Locale.ROOT);
        String suffix = NameNodeHa.NAMESERVICE + "." + id;
        env.put("MINICLUSTER_NN_RPC_" + upper, all.get("dfs.namenode.rpc-address." + suffix));
        String web = https != null ? "https-address." : "http-address.";
        env.put("MINICLUSTER_NN_HTTP_" + upper, all.get("dfs.namenode." + web + suffix));
      }
    } else if (opt.viewfs) {
      env.put("MINICLUSTER_VIEWFS", "true");
      String web = https != null ? "dfs.namenode.https-address." : "dfs.namenode.http-address.";
      env.put("MINICLUSTER_NN_RPC", all.get("dfs.namenode.rpc-address.ns1"));
      env.put("MINICLUSTER_NN_HTTP", all.get(web + "ns1"));
      env.put("MINICLUSTER_NN2_RPC", all.get("dfs.namenode.rpc-address.ns2"));
      env.put("MINICLUSTER_NN2_HTTP", all.get(web + "ns2"));
    } else {
      env.put("MINICLUSTER_NN_RPC", all.get("dfs.namenode.rpc-address"));
      env.put("MINICLUSTER_NN_HTTP",
          all.get(https != null ? "dfs.namenode.https-address" : "dfs.namenode.http-address"));
    }
    // The web app the RM serves: with --https, the HTTPS one.
    String webapp = https != null ? YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS
        : YarnConfiguration.RM_WEBAPP_ADDRESS;
    if (opt.rmHa) {
      env.put("MINICLUSTER_RM_HA_IDS", String.join(",", RM_IDS));
      for (String id : RM_IDS) {
        String upper = id.toUpperCase(java.util.Locale.ROOT);
        env.put("MINICLUSTER_RM_ADDRESS_" + upper,
            all.get(HAUtil.addSuffix(YarnConfiguration.RM_ADDRESS, id)));
        env.put("MINICLUSTER_RM_WEBAPP_" + upper, all.get(HAUtil.addSuffix(webapp, id)));
      }
    } else {
      env.put("MINICLUSTER_RM_ADDRESS", all.get(YarnConfiguration.RM_ADDRESS));
      env.put("MINICLUSTER_RM_SCHEDULER_ADDRESS",
          all.get(YarnConfiguration.RM_SCHEDULER_ADDRESS));
      env.put("MINICLUSTER_RM_WEBAPP", all.get(webapp));
    }
    env.put("MINICLUSTER_USER", testUser);
    env.put("MINICLUSTER_HADOOP_VERSION", org.apache.hadoop.util.VersionInfo.getVersion());
    env.put("MINICLUSTER_NODEMANAGERS", Integer.toString(opt.nodeManagers));
    env.put("MINICLUSTER_GPUS_PER_NODE", Long.toString(opt.gpus));
    // In index order (stop-nm's argument).
    StringBuilder nodes = new StringBuilder();
    for (int i = 0; i < opt.nodeManagers; i++) {
      nodes.append(i == 0 ? "" : ",").append(yarn.getNodeManager(i).getNMContext().getNodeId());
    }
    env.put("MINICLUSTER_NODE_IDS", nodes.toString());
    if (opt.placement) {
      // NodeManager 0 alone has GPUs; the last one alone has the label.
      env.put("MINICLUSTER_GPU_NODE", yarn.getNodeManager(0).getNMContext().getNodeId().toString());
      env.put("MINICLUSTER_NODE_LABEL", PlacementMode.LABEL);
      if (PlacementMode.attributeNode != null) {
        env.put("MINICLUSTER_NODE_ATTRIBUTE",
            PlacementMode.ATTRIBUTE + "=" + PlacementMode.ATTRIBUTE_VALUE);
        env.put("MINICLUSTER_ATTRIBUTE_NODE", PlacementMode.attributeNode);
      }
      env.put("MINICLUSTER_LABELLED_NODE",
          yarn.getNodeManager(opt.nodeManagers - 1).getNMContext().getNodeId().toString());
    }
    if (opt.preemption) {
      env.put("MINICLUSTER_QUEUES", String.join(",", PreemptionMode.QUEUES));
      env.put("MINICLUSTER_PREEMPTION_KILL_WAIT_MS", Long.toString(PreemptionMode.KILL_WAIT_MS));
      env.put("MINICLUSTER_NM_EXPIRY_MS", Long.toString(PreemptionMode.NODE_EXPIRY_MS));
    }
    if (secure != null) {
      secure.env(env);
    }
    if (https != null) {
      https.env(env);
    }
    if (kms != null) {
      kms.env(env);
    }
    // The launcher's own classpath: Hadoop's Java client, for tests that run it (FsShell).
    env.put("MINICLUSTER_CLASSPATH", System.getProperty("java.class.path"));
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, String> e : env.entrySet()) {
      sb.append(e.getKey()).append('=').append(e.getValue()).append('\n');
    }
    writeAtomically(new File(opt.dir, "minicluster.env"), sb.toString());
  }

  private static void collect(Configuration conf, Map<String, String> out) {
    for (Map.Entry<String, String> e : conf) {
      String k = e.getKey();
      String[] sources = conf.getPropertySources(k);
      boolean isDefault = sources != null && sources.length > 0;
      if (sources != null) {
        for (String s : sources) {
          if (!s.endsWith("-default.xml")) {
            isDefault = false;
          }
        }
      }
      if (!isDefault) {
        String v = conf.get(k); // variables expanded
        if (v != null) {
          out.put(k, v);
        }
      }
    }
  }

  static void writeXml(File f, Map<String, String> props) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sb.append("<!-- Written by tony's test minicluster launcher: the live configuration. -->\n");
    sb.append("<configuration>\n");
    for (Map.Entry<String, String> e : props.entrySet()) {
      sb.append("  <property><name>").append(escape(e.getKey()))
          .append("</name><value>").append(escape(e.getValue()))
          .append("</value></property>\n");
    }
    sb.append("</configuration>\n");
    writeAtomically(f, sb.toString());
  }

  private static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '<': b.append("&lt;"); break;
        case '>': b.append("&gt;"); break;
        case '&': b.append("&amp;"); break;
        case '"': b.append("&quot;"); break;
        default: b.append(c);
      }
    }
    return b.toString();
  }

  private static void writeAtomically(File f, String text) throws IOException {
    File t = new File(f.getPath() + ".tmp");
    Files.write(t.toPath(), text.getBytes(StandardCharsets.UTF_8));
    Files.move(t.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  // ------------------------------------------------------------- RM HA

  /** The index of the active RM, or -1. */
  private int activeRm() throws IOException {
    for (int i = 0; i < RM_IDS.length; i++) {
      ResourceManager rm = yarn.getResourceManager(i);
      if (rm != null && rm.getRMContext().getRMAdminService().getServiceStatus().getState()
          == HAServiceProtocol.HAServiceState.ACTIVE) {
        return i;
      }
    }
    return -1;
  }

  /** The ResourceManager serving now: the active one with --rm-ha, else the only one. */
  private ResourceManager activeResourceManager() throws IOException {
    if (!opt.rmHa) {
      return yarn.getResourceManager();
    }
    int index = activeRm();
    if (index < 0) {
      throw new IOException("no RM is active");
    }
    return yarn.getResourceManager(index);
  }

  private static HAServiceProtocol.StateChangeRequestInfo byUser() {
    return new HAServiceProtocol.StateChangeRequestInfo(
        HAServiceProtocol.RequestSource.REQUEST_BY_USER);
  }

  /** Waits until RM `index` is active and every NodeManager is RUNNING in it. */
  private void waitServing(int index) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(opt.readyTimeoutS);
    while (true) {
      ResourceManager rm = yarn.getResourceManager(index);
      int running = 0;
      if (activeRm() == index) {
        for (RMNode node : rm.getRMContext().getRMNodes().values()) {
          if (node.getState() == NodeState.RUNNING) {
            running++;
          }
        }
      }
      if (running >= opt.nodeManagers) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(RM_IDS[index] + " is not serving " + opt.nodeManagers
            + " NodeManagers after " + opt.readyTimeoutS + " s (" + running + " RUNNING)");
      }
      Thread.sleep(100);
    }
  }

  /** "failover-rm": the standby RM becomes active. Returns what happened. */
  private String failoverRm() throws Exception {
    int from = activeRm();
    if (from < 0) {
      throw new IOException("no RM is active");
    }
    int to = 1 - from;
    yarn.getResourceManager(from).getRMContext().getRMAdminService()
        .transitionToStandby(byUser());
    try {
      yarn.getResourceManager(to).getRMContext().getRMAdminService().transitionToActive(byUser());
    } catch (Exception e) {
      // Leave a cluster that serves (the test that asked sees the error, the next ones a cluster).
      String cause = rootCause(e);
      try {
        yarn.getResourceManager(from).getRMContext().getRMAdminService()
            .transitionToActive(byUser());
        waitServing(from);
      } catch (Exception back) {
        throw new IOException(RM_IDS[to] + " cannot become active (" + cause + "), nor "
            + RM_IDS[from] + " again (" + rootCause(back) + ")", e);
      }
      throw new IOException(RM_IDS[to] + " cannot become active (" + RM_IDS[from]
          + " is active again): " + cause, e);
    }
    waitServing(to);
    return RM_IDS[from] + " is standby, " + RM_IDS[to] + " active";
  }

  private static String rootCause(Throwable e) {
    while (e.getCause() != null && e.getCause() != e) {
      e = e.getCause();
    }
    return e.toString();
  }

  /** "restart-rm": the active RM is stopped and a new one started in its place, made active. */
  private String restartRm() throws Exception {
    int index = activeRm();
    if (index < 0) {
      throw new IOException("no RM is active");
    }
    yarn.restartResourceManager(index);
    yarn.getResourceManager(index).getRMContext().getRMAdminService()
        .transitionToActive(byUser());
    waitServing(index);
    return RM_IDS[index] + " restarted and active";
  }

  /**
   * Serves DIR/control/NAME.request files (see the class comment) until `stop` counts down,
   * one at a time, on a thread of its own.
   */
  private void startControl(CountDownLatch stop) {
    File control = new File(opt.dir, "control");
    control.mkdirs();
    Thread t = new Thread(() -> {
      while (stop.getCount() > 0) {
        File[] requests = control.listFiles((d, name) -> name.endsWith(".request"));
        if (requests != null) {
          for (File request : requests) {
            String name = request.getName();
            File done = new File(control,
                name.substring(0, name.length() - ".request".length()) + ".done");
            String answer;
            try {
              String command = new String(Files.readAllBytes(request.toPath()),
                  StandardCharsets.UTF_8).trim();
              Files.delete(request.toPath());
              PrivilegedExceptionAction<String> action;
              String[] words = command.split("\\s+", 2);
              boolean hdfs = command.endsWith("-nn");
              boolean killNm = words[0].equals("kill-nm");
              if (killNm ? !opt.preemption
                  : words[0].equals("stop-nm") ? !opt.rmHa && !opt.preemption
                  : hdfs ? !opt.nnHa : !opt.rmHa) {
                throw new IllegalArgumentException(command + " needs "
                    + (killNm ? "--preemption"
                        : words[0].equals("stop-nm") ? "--preemption, --rm-ha or --ha"
                        : hdfs ? "--ha" : "--rm-ha or --ha"));
              }
              switch (words[0]) {
                case "stop-nm":
                  if (words.length != 2) {
                    throw new IllegalArgumentException("stop-nm needs the NodeManager's index");
                  }
                  action = () -> {
                    // Its log handler's 10 s wait on stop, cut short as on the cluster's stop.
                    Thread nudger = startLogHandlerNudger(Thread.currentThread());
                    try {
                      return PreemptionMode.stopNodeManager(yarn, opt.nodeManagers,
                          activeResourceManager(), words[1], opt.readyTimeoutS);
                    } finally {
                      nudger.interrupt();
                      nudger.join();  // no nudge may land after the flag is cleared
                      Thread.interrupted();
                    }
                  };
                  break;
                case "kill-nm":
                  if (words.length != 2) {
                    throw new IllegalArgumentException("kill-nm needs the NodeManager's index");
                  }
                  action = () -> PreemptionMode.killNodeManager(yarn, opt.nodeManagers,
                      activeResourceManager(), words[1], opt.readyTimeoutS);
                  break;
                case "failover-rm": action = this::failoverRm; break;
                case "restart-rm": action = this::restartRm; break;
                case "failover-nn":
                  action = () -> NameNodeHa.failover(dfs, opt.readyTimeoutS);
                  break;
                case "standby-nn": action = () -> NameNodeHa.standbyAll(dfs); break;
                case "activate-nn":
                  action = () -> NameNodeHa.activate(dfs, opt.readyTimeoutS);
                  break;
                default: throw new IllegalArgumentException("unknown command " + command);
              }
              if (secure != null) {
                answer = "OK " + (hdfs ? secure.loginHdfs() : secure.loginAsYarn()).doAs(action);
              } else {
                answer = "OK " + action.run();
              }
            } catch (Throwable e) {
              e.printStackTrace();
              answer = "ERROR " + e;
            }
            System.err.println("minicluster: " + name + ": " + answer);
            try {
              writeAtomically(done, answer + "\n");
            } catch (IOException e) {
              System.err.println("minicluster: cannot answer " + name + ": " + e);
            }
          }
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          // A stray nudge: the loop ends only with the cluster.
        }
      }
    }, "minicluster-control");
    t.setDaemon(true);
    t.start();
  }

  // ---------------------------------------------------------------- stop

  /**
   * The NodeManager's NonAggregatingLogHandler waits 10 s on stop for its
   * pending (hours-delayed) log deletions, unless the stopping thread is
   * interrupted, when it drops them at once. Containers are already killed by
   * then. This watches the stopping thread and interrupts it only there.
   */
  private static Thread startLogHandlerNudger(Thread stopper) {
    Thread t = new Thread(() -> {
      try {
        while (true) {
          Thread.sleep(100);
          for (StackTraceElement e : stopper.getStackTrace()) {
            if (e.getClassName().endsWith(".NonAggregatingLogHandler")
                && e.getMethodName().equals("serviceStop")) {
              stopper.interrupt();
              Thread.sleep(500);
              break;
            }
          }
        }
      } catch (InterruptedException done) {
        // yarn.stop() returned
      }
    }, "minicluster-log-handler-nudger");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void stopQuietly() {
    if (!stopped.compareAndSet(false, true)) {
      return;
    }
    if (proxy != null) {
      try {
        proxy.stop();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping the web proxy: " + t);
      }
    }
    if (yarn != null) {
      Thread nudger = startLogHandlerNudger(Thread.currentThread());
      try {
        yarn.stop();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping YARN: " + t);
      } finally {
        nudger.interrupt();
        Thread.interrupted(); // a nudge that came late must not hit HDFS's stop
      }
    }
    if (dfs != null) {
      try {
        dfs.shutdown();
      } catch (Throwable t) {
        System.err.println("minicluster: stopping HDFS: " + t);
      }
    }
    if (kms != null) {
      kms.stop();
    }
    if (secure != null) {
      secure.stop();
    }
    ports.releaseAll();
  }
}
