#pragma once
// What the executor knows about its task when it builds the task's environment: the input of every
// framework runtime. Plain data; filled by the executor from its configuration and the cluster spec
// the AM released.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tony::runtime {

// Each job type's task addresses ("host:port"), indexed by task index: element i of
// cluster.at("worker") is the address of task worker:i.
using ClusterSpec = std::map<std::string, std::vector<std::string>>;

// Environment variables, name to value.
using Environment = std::map<std::string, std::string>;

struct TaskContext {
  std::string framework;  // "tensorflow", "pytorch", "mxnet", "horovod", "jax", "standalone"
  std::string job_type;   // this task's type, e.g. "worker"
  int task_index = 0;
  ClusterSpec cluster;        // every task of the job that has an address (tracked, untracked,
                              // sidecar)
  int num_tracked_tasks = 0;  // TASK_NUM
  bool is_chief = false;
  std::string app_id;            // JOB_ID
  std::string distributed_mode;  // "GANG" or "FCFS"
  std::string session_id;        // SESSION_ID (the AM attempt, "0" normally)
  std::string am_host;
  int am_port = 0;
  int attempt_number = 0;  // ATTEMPT_NUMBER of this task (0 for the first attempt)
  int restart_count = 0;   // how often the job's gang restarted (TORCHELASTIC_RESTART_COUNT)
  std::map<std::string, std::string> container_envs;  // tony.containers.envs
  std::map<std::string, std::string> execution_envs;  // tony.execution.envs and --shell_env
  std::optional<int> tensorboard_port;                // TB_PORT when reserved
  std::string tensorboard_host;                       // TB_HOST, with TB_PORT: where to listen
  // OMP_NUM_THREADS where above 0: the threads a task's math libraries (OpenMP, OpenBLAS, MKL)
  // start, its share of the cores (executor/task_context.h's MathThreads), instead of every core
  // of the host for each task; 0 to leave it to the environment or to torchrun.
  int cpu_threads = 0;
  // TONY_OUTPUT_DIR: the local directory where the task writes what the job keeps (executor's
  // LocalOutputDir); TONY_OUTPUT_URI: where that ends up (tony.application.output-dir). "": none.
  std::string output_dir;
  std::string output_uri;
  // The preprocessing job's task (PREPROCESSING_JOB=true), and what it handed to the later tasks
  // (MODEL_PARAMS, TonY's name, and TASK_PARAMS); "" for none.
  bool preprocessing = false;
  std::string model_params;
  // Horovod: "host:port" of the Gloo rendezvous store the AM named (its own, or a debug driver's).
  // An elastic PyTorch job: the AM's c10d store.
  std::string rendezvous_address;
  // An elastic PyTorch job's worker: torchrun's --nnodes, "MIN:MAX" (tony.worker.min-instances
  // and tony.worker.instances); "" for any other task.
  std::string elastic_nnodes;
  // An elastic worker's torchrun --max_restarts: how often its agent may start its processes
  // again after they failed (each loss of another worker costs the survivors one).
  int elastic_max_restarts = 0;
  // Horovod's debug driver (TonY's DRIVER_OUTPUT_PATH): the directory where it writes its port
  // file.
  std::string driver_output_path;
  // Types left out of framework clusters (TF_CONFIG's cluster): helpers such as TensorBoard that
  // run beside the job but take no part in training.
  std::set<std::string> sidecar_types = {"tensorboard"};
};

}  // namespace tony::runtime
