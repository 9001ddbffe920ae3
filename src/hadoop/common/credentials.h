#pragma once
// Hadoop credentials ("token storage") files: the container_tokens file YARN hands a container
// (HADOOP_TOKEN_FILE_LOCATION), and the tokens a client ships with an application.
//
// Layout: "HDTS", one version byte, then
//   version 0 (Writable): VInt token count, per token Text alias + Token (VInt-prefixed
//             identifier, VInt-prefixed password, Text kind, Text service); VInt secret count,
//             per secret Text alias + VInt-prefixed bytes.
//   version 1 (protobuf, Hadoop 3 writes this): one varint-delimited CredentialsFile message.
//
// Threads: a Credentials is a plain value; one thread at a time may modify an instance.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tony::hadoop {

// A Hadoop delegation token. identifier and password are raw bytes.
struct Token {
  std::string identifier;
  std::string password;
  std::string kind;     // e.g. YARN_AM_RM_TOKEN, HDFS_DELEGATION_TOKEN
  std::string service;  // e.g. "10.0.0.5:8030"; may be empty

  friend bool operator==(const Token&, const Token&) = default;
};

// A token as Hadoop's Token.encodeToUrlString writes it (WebHDFS's `delegation=` parameter and
// its GETDELEGATIONTOKEN answer): the Writable token (VInt-prefixed identifier and password, Text
// kind and service) in URL-safe base64 without padding.
std::string EncodeTokenUrlString(const Token& token);
// The inverse; accepts padding and the standard alphabet too. Errors name what is malformed.
[[nodiscard]] absl::StatusOr<Token> DecodeTokenUrlString(std::string_view text);

// What a delegation token's identifier says (Hadoop's AbstractDelegationTokenIdentifier, Writable:
// version byte 0, Text owner, renewer and real user, VLong issue and maximum dates in ms since the
// epoch, VInt sequence number and master key id): HDFS's, YARN's and most others.
struct DelegationTokenIdentifier {
  std::string owner;
  std::string renewer;
  std::string real_user;
  int64_t issue_date_ms = 0;
  int64_t max_date_ms = 0;  // the token is dead after this, renewed or not
  int32_t sequence_number = 0;
  int32_t master_key_id = 0;
};
// Errors name what is malformed; bytes after the master key id are an error too.
[[nodiscard]] absl::StatusOr<DelegationTokenIdentifier> DecodeDelegationTokenIdentifier(
    std::string_view identifier);

class Credentials {
 public:
  enum class Format : uint8_t { kWritable = 0, kProtobuf = 1 };

  // Parses a whole credentials file. `source` names it in errors (a path, "container tokens").
  [[nodiscard]] static absl::StatusOr<Credentials> Parse(std::string_view bytes,
                                                         std::string_view source);
  [[nodiscard]] static absl::StatusOr<Credentials> ReadFile(const std::string& path);

  std::string Serialize(Format format = Format::kProtobuf) const;
  // Writes atomically with mode 0600: the file holds secrets.
  [[nodiscard]] absl::Status WriteFile(const std::string& path,
                                       Format format = Format::kProtobuf) const;

  // Adds or replaces (same alias) an entry, keeping first-insertion order.
  void AddToken(std::string alias, Token token);
  void AddSecret(std::string alias, std::string secret);

  // The token under this alias, or nullptr.
  const Token* FindToken(std::string_view alias) const;
  // The first token of this kind (and this service, unless service is empty), or nullptr.
  const Token* FindTokenByKind(std::string_view kind, std::string_view service = {}) const;
  // Like FindTokenByKind, as a Status naming the kind and what the file holds when absent.
  [[nodiscard]] absl::StatusOr<Token> RequireTokenByKind(std::string_view kind,
                                                         std::string_view service = {}) const;
  const std::string* FindSecret(std::string_view alias) const;

  const std::vector<std::pair<std::string, Token>>& tokens() const { return tokens_; }
  const std::vector<std::pair<std::string, std::string>>& secrets() const { return secrets_; }

  friend bool operator==(const Credentials&, const Credentials&) = default;

 private:
  std::vector<std::pair<std::string, Token>> tokens_;
  std::vector<std::pair<std::string, std::string>> secrets_;
};

}  // namespace tony::hadoop
