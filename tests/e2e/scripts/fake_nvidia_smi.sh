#!/bin/sh
# A stand-in for nvidia-smi on machines without a GPU: two GPUs, as
# `nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used --format=csv,noheader,nounits`
# reports them. GPU 0 is 37% busy with 1500 MiB used, GPU 1 91% with 2500 MiB.
case "$1" in
  --query-gpu=index,uuid,utilization.gpu,memory.used) ;;
  *) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac
echo "0, GPU-00000000-0000-0000-0000-000000000000, 37, 1500"
echo "1, GPU-11111111-1111-1111-1111-111111111111, 91, 2500"
