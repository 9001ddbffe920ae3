package org.tony.minicluster;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;

/**
 * --preemption: the CapacityScheduler with two queues that share the cluster, default and urgent
 * (each guaranteed half of it, each allowed all of it, and one user may take it all), and its
 * preemption monitor on, quicker than its defaults: every second it takes back from a queue over
 * its guarantee what a queue under its own is waiting for, first telling the application (its
 * allocate response's preemption message), and killing the container (exit status -102,
 * PREEMPTED) KILL_WAIT_MS later unless the application released it by then. An application
 * master is taken only as a last resort, as YARN does.
 *
 * Its NodeManagers talk to the ResourceManager over RPC, as with --rm-ha, and both take "stop-nm I"
 * (the control files): NodeManager I (the one whose directories under data/yarn end in -nm-I_0)
 * stops as on SIGTERM: it leaves the cluster (unregisters) and kills its containers, which the
 * ResourceManager reports lost to their applications (exit status -100, ABORTED), as when a node
 * goes away. A --preemption cluster also takes "kill-nm I": NodeManager I goes silent as when its
 * process is killed, its containers running on, and the ResourceManager counts it lost
 * NODE_EXPIRY_MS later. Test code only.
 */
final class PreemptionMode {

  static final String[] QUEUES = {"default", "urgent"};
  /** Between the preemption message and the kill of a container not released by then. */
  static final long KILL_WAIT_MS = 15000;
  /**
   * How long the ResourceManager waits for a silent NodeManager before it counts the node lost
   * (YARN's default is 10 minutes). Ten heartbeats: no busy NodeManager is taken for lost.
   */
  static final long NODE_EXPIRY_MS = 10000;

  private PreemptionMode() {}

  /** The queues (into the CapacityScheduler's configuration). */
  static void applyQueues(Configuration capacity) {
    capacity.set("yarn.scheduler.capacity.root.queues", String.join(",", QUEUES));
    for (String queue : QUEUES) {
      String prefix = "yarn.scheduler.capacity.root." + queue + ".";
      capacity.set(prefix + "capacity", Integer.toString(100 / QUEUES.length));
      capacity.set(prefix + "maximum-capacity", "100");
      // One user may fill the cluster from either queue (the limit is its queue's guarantee
      // times this factor).
      capacity.set(prefix + "user-limit-factor", Integer.toString(QUEUES.length));
      capacity.set(prefix + "maximum-am-resource-percent", "1.0");
    }
  }

  /** The preemption monitor (into the ResourceManager's configuration). */
  static void applyMonitor(Configuration conf) {
    conf.setBoolean("yarn.resourcemanager.scheduler.monitor.enable", true);
    conf.set("yarn.resourcemanager.scheduler.monitor.policies",
        "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity."
            + "ProportionalCapacityPreemptionPolicy");
    String prefix = "yarn.resourcemanager.monitor.capacity.preemption.";
    conf.setLong(prefix + "monitoring_interval", 1000);
    conf.setLong(prefix + "max_wait_before_kill", KILL_WAIT_MS);
    // All that is due in one round, not a tenth of it per round, and no slack over a guarantee.
    conf.setFloat(prefix + "total_preemption_per_round", 1.0f);
    conf.setFloat(prefix + "natural_termination_factor", 1.0f);
    conf.setFloat(prefix + "max_ignored_over_capacity", 0.0f);
    // A request that no node has room for (the cluster's free memory split over nodes) reserves a
    // node; what is preempted for it comes from that node, so that it fits once taken back.
    conf.setBoolean(prefix + "select_based_on_reserved_containers", true);
  }

  /**
   * "stop-nm I": stops NodeManager I (its containers are killed) and waits until the
   * ResourceManager no longer counts it among its running nodes.
   */
  static String stopNodeManager(MiniYARNCluster yarn, int count, ResourceManager rm, String arg,
      long timeoutS) throws Exception {
    int index = nodeIndex("stop-nm", arg, count);
    NodeManager nm = yarn.getNodeManager(index);
    NodeId id = nm.getNMContext().getNodeId();
    if (nm.isInState(Service.STATE.STOPPED)) {
      return "nm-" + index + " (" + id + ") was stopped already";
    }
    nm.stop();
    awaitGone("stop-nm", rm, id, timeoutS);
    return "nm-" + index + " (" + id + ") stopped";
  }

  /**
   * "kill-nm I": NodeManager I goes silent as if its process had been killed (or its host cut
   * off): it stops heartbeating without leaving the cluster, and its containers run on. Once
   * NODE_EXPIRY_MS pass without a heartbeat, the ResourceManager counts the node LOST and reports
   * its containers lost to their applications (-100); they are killed only when the cluster stops,
   * so an application must stop what it had there itself. Returns once the RM counts it lost.
   */
  static String killNodeManager(MiniYARNCluster yarn, int count, ResourceManager rm, String arg,
      long timeoutS) throws Exception {
    int index = nodeIndex("kill-nm", arg, count);
    NodeManager nm = yarn.getNodeManager(index);
    NodeId id = nm.getNMContext().getNodeId();
    Service updater = nm.getNodeStatusUpdater();
    if (nm.isInState(Service.STATE.STOPPED) || updater.isInState(Service.STATE.STOPPED)) {
      return "nm-" + index + " (" + id + ") was stopped already";
    }
    // A stopping status updater unregisters its node unless the NodeManager runs supervised with
    // recovery on (it expects to be restarted and to find its containers again): the case of a
    // NodeManager killed by a supervisor's restart, which stays silent too. The rest of the
    // NodeManager reads them only with a recovery store, which it has none of (recovery was off at
    // its start): it still kills its containers when the cluster stops.
    updater.getConfig().setBoolean("yarn.nodemanager.recovery.enabled", true);
    updater.getConfig().setBoolean("yarn.nodemanager.recovery.supervised", true);
    updater.stop();
    awaitGone("kill-nm", rm, id, timeoutS);
    RMNode lost = rm.getRMContext().getInactiveRMNodes().get(id);
    return "nm-" + index + " (" + id + ") silent, the ResourceManager counts it "
        + (lost == null ? "gone" : lost.getState().toString());
  }

  /** The liveness expiry (into the ResourceManager's configuration): see kill-nm. */
  static void applyNodeExpiry(Configuration conf) {
    conf.setLong("yarn.nm.liveness-monitor.expiry-interval-ms", NODE_EXPIRY_MS);
  }

  private static int nodeIndex(String command, String arg, int count) {
    int index;
    try {
      index = Integer.parseInt(arg.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(command + ": not an index: " + arg);
    }
    if (index < 0 || index >= count) {
      throw new IllegalArgumentException(command + ": no NodeManager " + index + " (there are "
          + count + ")");
    }
    return index;
  }

  /** Waits until the ResourceManager no longer counts node `id` among its running nodes. */
  private static void awaitGone(String command, ResourceManager rm, NodeId id, long timeoutS)
      throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
    while (rm.getRMContext().getRMNodes().containsKey(id)) {
      if (System.nanoTime() > deadline) {
        throw new IOException(command + ": the ResourceManager still counts " + id + " after "
            + timeoutS + " s");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException late) {
        // A nudge meant for the NodeManager's stop (the caller's), come late: wait on.
      }
    }
  }
}
