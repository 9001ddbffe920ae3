#!/bin/sh
# Reads a file of an HDFS encryption zone with Hadoop's own Java client, as a TensorFlow or
# PyTorch task does through libhdfs, with nothing but the task's delegation tokens: no Kerberos
# ticket (KRB5CCNAME names no cache). First it prints the kinds of the tokens it has.
#   read_encryption_zone.sh MINICLUSTER_DIR
# The mini cluster's directory has the client configuration and, in minicluster.env, the
# classpath of Hadoop's client, krb5.conf and the file to read.
set -eu
dir="$1"
value() { sed -n "s/^$1=//p" "$dir/minicluster.env"; }
classpath="$dir:$(value MINICLUSTER_CLASSPATH)"
krb5="$(value MINICLUSTER_KRB5_CONF)"
export KRB5CCNAME="FILE:$PWD/no-ticket-here"
java -Djava.security.krb5.conf="$krb5" -cp "$classpath" \
  org.apache.hadoop.security.token.DtUtilShell print "$HADOOP_TOKEN_FILE_LOCATION" 2>/dev/null
printf 'content: '
java -Djava.security.krb5.conf="$krb5" -cp "$classpath" \
  org.apache.hadoop.fs.FsShell -cat "$(value MINICLUSTER_EZ_FILE)" 2>encryption-zone-read.err ||
  { echo; cat encryption-zone-read.err; exit 1; }
echo
