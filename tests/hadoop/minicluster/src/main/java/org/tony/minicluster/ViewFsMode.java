package org.tony.minicluster;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;

/**
 * --viewfs: HDFS federated over two NameNodes (nameservices ns1 and ns2, one NameNode each), and
 * a client configuration whose default file system is a ViewFS mount table over both, as many
 * large clusters give their users: /user and /tmp on ns1, /data on ns2, and everything else on ns2
 * (linkFallback, which hdfs-native requires). The links name each NameNode by its RPC address, as
 * mount tables over non-HA NameNodes do; hdfs-site.xml has each nameservice's addresses
 * (dfs.nameservices, dfs.namenode.rpc-address.ns1, .http-address.ns1, ...). Test code only.
 */
final class ViewFsMode {

  static final String TABLE = "minicluster";
  static final String DEFAULT_FS = "viewfs://" + TABLE + "/";
  static final String[] NAMESERVICES = {"ns1", "ns2"};

  private ViewFsMode() {}

  static MiniDFSNNTopology topology() {
    return MiniDFSNNTopology.simpleFederatedTopology(NAMESERVICES.length);
  }

  /** hdfs://127.0.0.1:port of NameNode `index`. */
  static String uri(MiniDFSCluster dfs, int index) {
    return "hdfs://" + hostPort(dfs.getNameNode(index).getNameNodeAddress());
  }

  /** The keys the cluster's clients have: the nameservices and the mount table. */
  static Map<String, String> clientKeys(MiniDFSCluster dfs, boolean https) {
    TreeMap<String, String> keys = new TreeMap<>();
    keys.put("fs.defaultFS", DEFAULT_FS);
    keys.put("dfs.nameservices", String.join(",", NAMESERVICES));
    for (int i = 0; i < NAMESERVICES.length; i++) {
      String ns = NAMESERVICES[i];
      keys.put("dfs.namenode.rpc-address." + ns,
          hostPort(dfs.getNameNode(i).getNameNodeAddress()));
      if (https) {
        keys.put("dfs.namenode.https-address." + ns,
            hostPort(dfs.getNameNode(i).getHttpsAddress()));
      } else {
        keys.put("dfs.namenode.http-address." + ns,
            hostPort(dfs.getNameNode(i).getHttpAddress()));
      }
    }
    String table = "fs.viewfs.mounttable." + TABLE + ".";
    keys.put(table + "link./user", uri(dfs, 0) + "/user");
    keys.put(table + "link./tmp", uri(dfs, 0) + "/tmp");
    keys.put(table + "link./data", uri(dfs, 1) + "/data");
    keys.put(table + "linkFallback", uri(dfs, 1) + "/");
    return keys;
  }

  /** Whether `key` describes one NameNode of the federation (not a client's key). */
  static boolean isServerSideKey(String key) {
    return NameNodeHa.isServerSideKey(key);
  }

  private static String hostPort(InetSocketAddress address) {
    return "127.0.0.1:" + address.getPort();
  }
}
