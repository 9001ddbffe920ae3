#include "config/key_catalog.h"

#include <gtest/gtest.h>

#include <string_view>

namespace tony::config {
namespace {

// Every key of TonY's own defaults (its tony-default.xml and the constants of its configuration
// keys class, TonY at the time of writing): tony knows each one, implemented or accepted with a
// one-line reason, so that a TonY user's configuration draws no "unknown key" warning.
constexpr std::string_view kTonyKeys[] = {
    "tony.am.gpus",
    "tony.am.memory",
    "tony.am.retry-count",
    "tony.am.startup-timeout",
    "tony.am.vcores",
    "tony.am.wait-client-signal-stop-timeout-sec",
    "tony.application.distributed-mode",
    "tony.application.enable-preprocess",
    "tony.application.fail-on-worker-failure-enabled",
    "tony.application.framework",
    "tony.application.hadoop.classpath",
    "tony.application.hadoop.location",
    "tony.application.hdfs-conf-path",
    "tony.application.mapred-conf-path",
    "tony.application.name",
    "tony.application.node-label",
    "tony.application.num-client-rm-connect-retries",
    "tony.application.placement-spec",
    "tony.application.prepare-stage",
    "tony.application.security.enabled",
    "tony.application.sidecar.jobtypes",
    "tony.application.stop-on-failure-jobtypes",
    "tony.application.tags",
    "tony.application.tensorboard-log-dir",
    "tony.application.timeout",
    "tony.application.training-stage",
    "tony.application.type",
    "tony.application.untracked.jobtypes",
    "tony.application.yarn-conf-path",
    "tony.container.allocation.timeout",
    "tony.container.registration.timeout",
    "tony.containers.envs",
    "tony.docker.enabled",
    "tony.execution.envs",
    "tony.gpu-exec-path",
    "tony.history.finished",
    "tony.history.finished-dir-timezone",
    "tony.history.intermediate",
    "tony.history.location",
    "tony.history.mover-interval-ms",
    "tony.history.purger-interval-ms",
    "tony.history.retention-sec",
    "tony.horovod.driver.mode.debug",
    "tony.horovod.mode.test",
    "tony.horovod.mode.test.fast.fail",
    "tony.http.port",
    "tony.https.keystore.algorithm",
    "tony.https.keystore.password",
    "tony.https.keystore.path",
    "tony.https.keystore.type",
    "tony.https.port",
    "tony.keytab.location",
    "tony.keytab.user",
    "tony.other.namenodes",
    "tony.portal.cache.max-entries",
    "tony.portal.url",
    "tony.ps.memory",
    "tony.ps.vcores",
    "tony.python-exec-path",
    "tony.secret.key",
    "tony.task.am.jvm.opts",
    "tony.task.default.jvm.opts",
    "tony.task.executor.execution-timeout-ms",
    "tony.task.executor.execution.error-message-max-depth",
    "tony.task.executor.jvm.opts",
    "tony.task.executor.registry-timeout-sec",
    "tony.task.gpu-metrics.enabled",
    "tony.task.heartbeat-interval-ms",
    "tony.task.max-missed-heartbeats",
    "tony.task.max-total-gpus",
    "tony.task.max-total-instances",
    "tony.task.metrics-interval-ms",
    "tony.version-info.branch",
    "tony.version-info.checksum",
    "tony.version-info.date",
    "tony.version-info.revision",
    "tony.version-info.url",
    "tony.version-info.user",
    "tony.version-info.version",
    "tony.worker.gpus",
    "tony.worker.memory",
    "tony.worker.vcores",
    "tony.yarn.queue",
};

TEST(KeyCatalogTest, KnowsEveryKeyOfTonysDefaults) {
  const KeyCatalog& catalog = KeyCatalog::BuiltIn();
  for (std::string_view key : kTonyKeys) {
    const KeyInfo* info = catalog.Lookup(key);
    EXPECT_NE(info, nullptr) << key << " is unknown to tony";
    if (info != nullptr && info->unsupported) {
      EXPECT_FALSE(info->unsupported->empty()) << key << " is unsupported without a reason";
    }
  }
}

}  // namespace
}  // namespace tony::config
