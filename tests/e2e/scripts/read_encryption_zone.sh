#!/bin/sh
# Reads a file of an HDFS encryption zone with Hadoop's own Java client, as a TensorFlow or
# PyTorch task does through libhdfs, with nothing but the task's delegation tokens: no Kerberos
# ticket (KRB5CCNAME names no cache). First it prints the kinds of the tokens it has.
#   read_encryption_zone.sh MINICLUSTER_DIR [KMS_TOKEN_ALIAS]
# The mini cluster's directory has the client configuration and, in minicluster.env, the
# classpath of Hadoop's client, krb5.conf and the file to read. With KMS_TOKEN_ALIAS, it then
# reads again from a copy of its tokens without that one (the control: the read must fail) and
# says "without the KMS token: refused" or "...: read".
set -eu
dir="$1"
value() { sed -n "s/^$1=//p" "$dir/minicluster.env"; }
classpath="$dir:$(value MINICLUSTER_CLASSPATH)"
krb5="$(value MINICLUSTER_KRB5_CONF)"
file="$(value MINICLUSTER_EZ_FILE)"
export KRB5CCNAME="FILE:$PWD/no-ticket-here"
hadoop_java() { java -Djava.security.krb5.conf="$krb5" -cp "$classpath" "$@"; }
hadoop_java org.apache.hadoop.security.token.DtUtilShell print "$HADOOP_TOKEN_FILE_LOCATION" \
  2>/dev/null
printf 'content: '
hadoop_java org.apache.hadoop.fs.FsShell -cat "$file" 2>encryption-zone-read.err ||
  { echo; cat encryption-zone-read.err; exit 1; }
echo
if [ $# -ge 2 ]; then
  cp "$HADOOP_TOKEN_FILE_LOCATION" tokens-without-kms
  hadoop_java org.apache.hadoop.security.token.DtUtilShell remove -alias "$2" tokens-without-kms \
    >/dev/null 2>&1
  if HADOOP_TOKEN_FILE_LOCATION="$PWD/tokens-without-kms" \
     hadoop_java org.apache.hadoop.fs.FsShell -cat "$file" >/dev/null 2>control.err; then
    echo "without the KMS token: read"
  else
    echo "without the KMS token: refused"
  fi
fi
