package org.tony.minicluster;

import java.io.File;
import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.api.protocolrecords.AddToClusterNodeLabelsRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.ReplaceLabelsOnNodeRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.AdminService;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * --placement: a cluster on which placement tests can tell nodes apart (use it with
 * --nodemanagers 3 or more).
 *
 * <ul>
 *   <li>The CapacityScheduler places SchedulingRequests under their placement constraints
 *       (yarn.resourcemanager.placement-constraints.handler=scheduler).
 *   <li>Only NodeManager 0 has GPUs (--gpus G): the others are set to none once they registered,
 *       as an administrator's "yarn rmadmin -updateNodeResource" does.
 *   <li>Node labels, centrally configured: the cluster label LABEL, non-exclusive, on the last
 *       NodeManager alone; the default queue may use all of it.
 *   <li>Hadoop 3.2+: the node attribute ATTRIBUTE=ATTRIBUTE_VALUE, centrally configured, on the
 *       NodeManagers' host; they share one, and the ResourceManager gives a host's attributes to
 *       one of its nodes (attributeNode). Hadoop 2 has no node attributes; their API is called by
 *       reflection, so that this source builds against both.
 * </ul>
 *
 * Test code only.
 */
final class PlacementMode {

  /** The node label of the last NodeManager. */
  static final String LABEL = "tony-labelled";
  /** The node attribute every node has (Hadoop 3.2+), with the centralized prefix rm.yarn.io. */
  static final String ATTRIBUTE = "tony-node";
  static final String ATTRIBUTE_VALUE = "yes";
  /** The node that has the attribute, once configureNodes ran (Hadoop 3.2+); else null. */
  static String attributeNode;

  private PlacementMode() {}

  /** Into the ResourceManager's configuration, before it starts. */
  static void apply(Configuration conf, File data) {
    conf.set("yarn.resourcemanager.placement-constraints.handler", "scheduler");
    conf.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    conf.set(YarnConfiguration.FS_NODE_LABELS_STORE_ROOT_DIR,
        new File(data, "node-labels").toURI().toString());
  }

  /**
   * Once every NodeManager registered: the label (and the queues' share of it, which the
   * CapacityScheduler takes only for a label the cluster has, so by a refresh of its queues from
   * DIR/data/conf/capacity-scheduler.xml) and the GPUs.
   */
  static void configureNodes(MiniYARNCluster yarn, ResourceManager rm, int count, File data,
      Configuration capacity, long timeoutS) throws Exception {
    AdminService admin = rm.getRMContext().getRMAdminService();
    admin.addToClusterNodeLabels(AddToClusterNodeLabelsRequest.newInstance(
        Collections.singletonList(NodeLabel.newInstance(LABEL, false))));
    NodeId labelled = yarn.getNodeManager(count - 1).getNMContext().getNodeId();
    admin.replaceLabelsOnNode(ReplaceLabelsOnNodeRequest.newInstance(
        Collections.singletonMap(labelled, Collections.singleton(LABEL))));
    // The refresh reads the file over a configuration of the classpath's alone: it must say all
    // the ResourceManager started with (maximum allocations, resource types), or the queues
    // would shrink, which it refuses.
    TreeMap<String, String> queues = new TreeMap<>();
    for (Map.Entry<String, String> e : rm.getConfig()) {
      if (e.getKey().startsWith("yarn.")) {
        queues.put(e.getKey(), rm.getConfig().get(e.getKey()));
      }
    }
    for (Map.Entry<String, String> e : capacity) {
      queues.put(e.getKey(), e.getValue());
    }
    queues.put("yarn.scheduler.capacity.root.accessible-node-labels", LABEL);
    queues.put("yarn.scheduler.capacity.root.accessible-node-labels." + LABEL + ".capacity", "100");
    queues.put("yarn.scheduler.capacity.root.default.accessible-node-labels", LABEL);
    queues.put("yarn.scheduler.capacity.root.default.accessible-node-labels." + LABEL
        + ".capacity", "100");
    queues.put("yarn.scheduler.capacity.root.default.accessible-node-labels." + LABEL
        + ".maximum-capacity", "100");
    File confDir = new File(data, "conf");
    if (!confDir.isDirectory() && !confDir.mkdirs()) {
      throw new IOException("cannot create " + confDir);
    }
    MiniClusterLauncher.writeXml(new File(confDir, "capacity-scheduler.xml"), queues);
    admin.refreshQueues(RefreshQueuesRequest.newInstance());

    Map<NodeId, ResourceOption> update = new HashMap<>();
    for (int i = 1; i < count; i++) {
      NodeId id = yarn.getNodeManager(i).getNMContext().getNodeId();
      Resource total = Resources.clone(rm.getRMContext().getRMNodes().get(id).getTotalCapability());
      total.setResourceValue(MiniClusterLauncher.GPU, 0);
      update.put(id, ResourceOption.newInstance(total, -1));
    }
    if (!update.isEmpty()) {
      admin.updateNodeResource(UpdateNodeResourceRequest.newInstance(update));
    }
    // The scheduler takes the new sizes with the nodes' next heartbeats.
    CapacityScheduler scheduler = (CapacityScheduler) rm.getResourceScheduler();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
    if (hasNodeAttributes()) {
      addNodeAttribute(admin, yarn.getNodeManager(0).getNMContext().getNodeId().getHost());
      // The attributes manager keeps one node per host: one of them has the attribute.
      while (attributeNode == null) {
        for (int i = 0; i < count && attributeNode == null; i++) {
          NodeId id = yarn.getNodeManager(i).getNMContext().getNodeId();
          SchedulerNode node = scheduler.getSchedulerNode(id);
          Object attributes =
              node == null ? null : SchedulerNode.class.getMethod("getNodeAttributes").invoke(node);
          if (attributes instanceof java.util.Collection
              && !((java.util.Collection<?>) attributes).isEmpty()) {
            attributeNode = id.toString();
          }
        }
        if (attributeNode == null && System.nanoTime() > deadline) {
          throw new IOException("--placement: no node has the attribute " + ATTRIBUTE);
        }
        if (attributeNode == null) {
          Thread.sleep(100);
        }
      }
    }
    for (NodeId id : update.keySet()) {
      while (true) {
        SchedulerNode node = scheduler.getSchedulerNode(id);
        if (node != null && node.getTotalResource().getResourceValue(MiniClusterLauncher.GPU) == 0) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("--placement: the scheduler still counts GPUs on " + id);
        }
        Thread.sleep(100);
      }
    }
  }

  /** Whether this Hadoop has node attributes (3.2+). */
  static boolean hasNodeAttributes() {
    try {
      Class.forName("org.apache.hadoop.yarn.api.records.NodeAttribute");
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /**
   * As "yarn nodeattributes -add HOST:ATTRIBUTE(STRING)=ATTRIBUTE_VALUE" does, through the admin
   * service (by reflection: the classes are Hadoop 3.2's).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void addNodeAttribute(AdminService admin, String host) throws Exception {
    String records = "org.apache.hadoop.yarn.api.records.";
    String protocol = "org.apache.hadoop.yarn.server.api.protocolrecords.";
    Class typeClass = Class.forName(records + "NodeAttributeType");
    Class attributeClass = Class.forName(records + "NodeAttribute");
    Object attribute = attributeClass
        .getMethod("newInstance", String.class, String.class, typeClass, String.class)
        .invoke(null, "rm.yarn.io", ATTRIBUTE, Enum.valueOf(typeClass, "STRING"), ATTRIBUTE_VALUE);
    Object mapping = Class.forName(protocol + "NodeToAttributes")
        .getMethod("newInstance", String.class, List.class)
        .invoke(null, host, Collections.singletonList(attribute));
    Class operationClass = Class.forName(protocol + "AttributeMappingOperationType");
    Class requestClass = Class.forName(protocol + "NodesToAttributesMappingRequest");
    Object request = requestClass
        .getMethod("newInstance", operationClass, List.class, boolean.class)
        .invoke(null, Enum.valueOf(operationClass, "ADD"), Collections.singletonList(mapping), true);
    AdminService.class.getMethod("mapAttributesToNodes", requestClass).invoke(admin, request);
  }
}
