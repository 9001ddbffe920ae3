#pragma once
// What a task's user process needs to reach HDFS with Hadoop's own clients (libhdfs, pyarrow,
// hdfs-native): TonY's task environment on a Hadoop cluster.
//  - HADOOP_CONF_DIR: the job's copy of the client configuration (the submitting client's
//    *-site.xml, unpacked into the container as ./hadoop-conf), which wins over a node's own:
//    it is the configuration the job was submitted with;
//  - CLASSPATH: as TonY sets it, `hadoop classpath --glob` of the node's Hadoop installation
//    (HADOOP_HOME, HADOOP_COMMON_HOME, or `hadoop` on the PATH), before any CLASSPATH the task
//    already has; left alone where the node has no Hadoop.
// HADOOP_USER_NAME (simple authentication) and the tokens (HADOOP_TOKEN_FILE_LOCATION) come with
// the container itself.
//
// Threads: any; it may run `hadoop` (a JVM) for up to `timeout_ms`.

#include <map>
#include <string>

namespace tony::executor {

// `working_dir`: the container's; `scratch_dir`: where the classpath command may write its output.
std::map<std::string, std::string> HadoopTaskEnvironment(const std::string& working_dir,
                                                         const std::string& scratch_dir,
                                                         int timeout_ms = 60000);

}  // namespace tony::executor
