#!/usr/bin/env python3
"""tf_server.py

A TensorFlow server for this task of TF_CONFIG (a ps or a worker of ParameterServerStrategy):
serves until it is stopped.
"""
import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                              task_index=resolver.task_id, protocol="grpc", start=True)
print(f"serving {resolver.task_type}:{resolver.task_id}", flush=True)
server.join()
