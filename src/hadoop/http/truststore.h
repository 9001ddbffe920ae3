#pragma once
// The certificate authorities a client trusts for the cluster's HTTPS endpoints (WebHDFS with
// dfs.http.policy HTTPS_ONLY), found as Hadoop's clients find them: ssl-client.xml (or the file
// hadoop.ssl.client.conf names) in the Hadoop configuration directory, whose
// ssl.client.truststore.location names a Java truststore, opened with
// ssl.client.truststore.password. Without that file or that key, the system's authorities.
//
// Truststore formats, found by content (ssl.client.truststore.type is a hint Java itself does not
// need since keystore.type.compat): JKS and JCEKS (Java's own; their trusted-certificate and
// private-key entries, the latter's certificate chain skipped), PKCS12 (through OpenSSL: what
// keytool writes by default since Java 9), and PEM. With a password, a JKS file's integrity
// digest is checked, as Java checks it; without one it is not (Java's rule too).
//
// Threads: pure functions, except that LoadTrustStore and ClientTls read files.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hadoop/common/hadoop_conf.h"
#include "hadoop/http/http_transport.h"

namespace tony::hadoop {

// The trusted certificates of a truststore's bytes, as PEM ("-----BEGIN CERTIFICATE-----..."),
// in the file's order. kInvalidArgument for a file that is none of the formats above, a wrong
// password, a corrupt file, or one without any certificate.
absl::StatusOr<std::string> TrustStoreToPem(std::string_view bytes, std::string_view password);

// The same for a file; errors start with its path.
absl::StatusOr<std::string> LoadTrustStore(const std::string& path, std::string_view password);

// What a client of `conf`'s cluster trusts for HTTPS (see above). Errors, kInvalidArgument, name
// the file and key at fault: "ssl.client.truststore.location in /etc/hadoop/conf/ssl-client.xml:
// /etc/pki/x.jks: ...".
absl::StatusOr<http::Tls> ClientTls(const HadoopConf& conf);

}  // namespace tony::hadoop
