package org.tony.minicluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;

/**
 * The HDFS side of --ha: a MiniDFSCluster with one HA nameservice of two NameNodes (nn1, nn2) and
 * shared edits, nn1 active at start, and what its clients get (no single-NameNode address), as an
 * HA cluster's hdfs-site.xml has it. Failover is by hand, through the launcher's control files.
 * Test code only.
 */
final class NameNodeHa {

  /** The nameservice of MiniDFSNNTopology.simpleHATopology(). */
  static final String NAMESERVICE = "minidfs-ns";
  static final String[] IDS = {"nn1", "nn2"};
  static final String DEFAULT_FS = "hdfs://" + NAMESERVICE;

  private NameNodeHa() {}

  static MiniDFSNNTopology topology() {
    return MiniDFSNNTopology.simpleHATopology();
  }

  /**
   * The keys an HA cluster's HDFS clients have, from the live NameNodes: each one's HTTP address,
   * or with `https` (HTTPS_ONLY) its HTTPS address.
   */
  static Map<String, String> clientKeys(MiniDFSCluster dfs, boolean https) {
    TreeMap<String, String> keys = new TreeMap<>();
    keys.put("fs.defaultFS", DEFAULT_FS);
    keys.put("dfs.nameservices", NAMESERVICE);
    keys.put("dfs.ha.namenodes." + NAMESERVICE, String.join(",", IDS));
    for (int i = 0; i < IDS.length; i++) {
      String suffix = NAMESERVICE + "." + IDS[i];
      keys.put("dfs.namenode.rpc-address." + suffix,
          hostPort(dfs.getNameNode(i).getNameNodeAddress()));
      if (https) {
        keys.put("dfs.namenode.https-address." + suffix,
            hostPort(dfs.getNameNode(i).getHttpsAddress()));
      } else {
        keys.put("dfs.namenode.http-address." + suffix,
            hostPort(dfs.getNameNode(i).getHttpAddress()));
      }
    }
    keys.put("dfs.client.failover.proxy.provider." + NAMESERVICE,
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider");
    // Clients try each NameNode a few times, quickly (the defaults wait minutes).
    keys.put("dfs.client.failover.max.attempts", "20");
    keys.put("dfs.client.failover.sleep.base.millis", "100");
    keys.put("dfs.client.failover.sleep.max.millis", "1000");
    return keys;
  }

  /** Whether `key` describes a single NameNode or one NameNode's own side of HA. */
  static boolean isServerSideKey(String key) {
    return key.startsWith("dfs.namenode.rpc-address") || key.startsWith("dfs.namenode.http-address")
        || key.startsWith("dfs.namenode.https-address")
        || key.startsWith("dfs.namenode.servicerpc-address")
        || key.startsWith("dfs.namenode.lifeline.rpc-address")
        || key.startsWith("dfs.namenode.shared.edits.dir") || key.equals("dfs.ha.namenode.id")
        || key.startsWith("dfs.ha.namenodes.") || key.equals("dfs.nameservices")
        || key.equals("dfs.nameservice.id") || key.startsWith("dfs.namenode.name.dir")
        || key.startsWith("dfs.namenode.edits.dir")
        || key.startsWith("dfs.namenode.checkpoint.");
  }

  private static String hostPort(InetSocketAddress address) {
    return "127.0.0.1:" + address.getPort();
  }

  /** The index of the active NameNode, or -1. */
  static int active(MiniDFSCluster dfs) {
    for (int i = 0; i < IDS.length; i++) {
      if (dfs.getNameNode(i) != null && dfs.getNameNode(i).isActiveState()) {
        return i;
      }
    }
    return -1;
  }

  /** "failover-nn": the active NameNode becomes standby and the other active. */
  static String failover(MiniDFSCluster dfs, long timeoutS) throws Exception {
    int from = active(dfs);
    if (from < 0) {
      throw new IOException("no NameNode is active");
    }
    int to = 1 - from;
    dfs.transitionToStandby(from);
    dfs.transitionToActive(to);
    waitServing(dfs, to, timeoutS);
    return IDS[from] + " is standby, " + IDS[to] + " active";
  }

  /** "standby-nn": no NameNode is active (what a client sees in the middle of a failover). */
  static String standbyAll(MiniDFSCluster dfs) throws Exception {
    int from = active(dfs);
    if (from >= 0) {
      dfs.transitionToStandby(from);
    }
    return "both NameNodes are standby";
  }

  /** "activate-nn": nn1 becomes active if no NameNode is. */
  static String activate(MiniDFSCluster dfs, long timeoutS) throws Exception {
    if (active(dfs) < 0) {
      dfs.transitionToActive(0);
    }
    int index = active(dfs);
    waitServing(dfs, index, timeoutS);
    return IDS[index] + " active";
  }

  /** Waits until NameNode `index` is active, out of safe mode and answers a read. */
  private static void waitServing(MiniDFSCluster dfs, int index, long timeoutS) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
    while (true) {
      try {
        if (dfs.getNameNode(index).isActiveState()
            && !dfs.getNamesystem(index).isInSafeMode()) {
          dfs.getFileSystem(index).getFileStatus(new Path("/"));
          return;
        }
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(IDS[index] + " is not serving after " + timeoutS + " s");
      }
      Thread.sleep(100);
    }
  }
}
