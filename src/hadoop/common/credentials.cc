#include "hadoop/common/credentials.h"

#include "common/files.h"
#include "common/strings.h"
#include "hadoop/common/delimited.h"
#include "hadoop/common/tokens.pb.h"
#include "hadoop/common/writable.h"

namespace tony::hadoop {
namespace {

constexpr std::string_view kMagic = "HDTS";

template <typename Entry>
void Upsert(std::vector<std::pair<std::string, Entry>>& entries, std::string alias, Entry value) {
  for (auto& [existing, entry] : entries) {
    if (existing == alias) {
      entry = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(alias), std::move(value));
}

absl::Status InFile(const absl::Status& status, std::string_view source) {
  return absl::Status(status.code(), StrCat("credentials ", source, ": ", ToStd(status.message())));
}

absl::StatusOr<Credentials> ParseWritable(std::string_view body) {
  Credentials credentials;
  WritableReader reader(body);
  absl::StatusOr<int32_t> token_count = reader.ReadVInt("token count");
  if (!token_count.ok()) return token_count.status();
  if (*token_count < 0) {
    return absl::InvalidArgumentError(StrCat("negative token count ", *token_count));
  }
  for (int32_t i = 0; i < *token_count; ++i) {
    std::string n = StrCat("token ", i);
    absl::StatusOr<std::string> alias = reader.ReadLengthPrefixed(StrCat("alias of ", n));
    if (!alias.ok()) return alias.status();
    Token token;
    absl::StatusOr<std::string> field = reader.ReadLengthPrefixed(StrCat("identifier of ", n));
    if (!field.ok()) return field.status();
    token.identifier = std::move(*field);
    field = reader.ReadLengthPrefixed(StrCat("password of ", n));
    if (!field.ok()) return field.status();
    token.password = std::move(*field);
    field = reader.ReadLengthPrefixed(StrCat("kind of ", n));
    if (!field.ok()) return field.status();
    token.kind = std::move(*field);
    field = reader.ReadLengthPrefixed(StrCat("service of ", n));
    if (!field.ok()) return field.status();
    token.service = std::move(*field);
    credentials.AddToken(std::move(*alias), std::move(token));
  }
  absl::StatusOr<int32_t> secret_count = reader.ReadVInt("secret key count");
  if (!secret_count.ok()) return secret_count.status();
  if (*secret_count < 0) {
    return absl::InvalidArgumentError(StrCat("negative secret key count ", *secret_count));
  }
  for (int32_t i = 0; i < *secret_count; ++i) {
    std::string n = StrCat("secret key ", i);
    absl::StatusOr<std::string> alias = reader.ReadLengthPrefixed(StrCat("alias of ", n));
    if (!alias.ok()) return alias.status();
    absl::StatusOr<std::string> secret = reader.ReadLengthPrefixed(StrCat("value of ", n));
    if (!secret.ok()) return secret.status();
    credentials.AddSecret(std::move(*alias), std::move(*secret));
  }
  if (reader.remaining() != 0) {
    return absl::InvalidArgumentError(
        StrCat(reader.remaining(), " unexpected bytes after the secret keys"));
  }
  return credentials;
}

absl::StatusOr<Credentials> ParseProtobuf(std::string_view body) {
  proto::CredentialsFile file;
  if (absl::Status s = ParsePayload(body, &file, "credentials message"); !s.ok()) return s;
  Credentials credentials;
  for (int i = 0; i < file.tokens_size(); ++i) {
    const proto::CredentialsEntry& entry = file.tokens(i);
    if (!entry.has_token()) {
      return absl::InvalidArgumentError(
          StrCat("token entry ", i, " ('", entry.alias(), "') has no token"));
    }
    const proto::TokenMessage& t = entry.token();
    credentials.AddToken(entry.alias(), Token{t.identifier(), t.password(), t.kind(), t.service()});
  }
  for (const proto::CredentialsEntry& entry : file.secrets()) {
    credentials.AddSecret(entry.alias(), entry.secret());
  }
  return credentials;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-' || c == '+') return 62;
  if (c == '_' || c == '/') return 63;
  return -1;
}

}  // namespace

std::string EncodeTokenUrlString(const Token& token) {
  std::string bytes;
  WriteText(token.identifier, &bytes);
  WriteText(token.password, &bytes);
  WriteText(token.kind, &bytes);
  WriteText(token.service, &bytes);
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : bytes) {
    bits = (bits << 8) | static_cast<uint8_t>(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(kAlphabet[(bits >> count) & 63]);
    }
  }
  if (count > 0) out.push_back(kAlphabet[(bits << (6 - count)) & 63]);
  return out;
}

absl::StatusOr<DelegationTokenIdentifier> DecodeDelegationTokenIdentifier(
    std::string_view identifier) {
  WritableReader reader(identifier);
  absl::StatusOr<uint8_t> version = reader.ReadByte("token identifier version");
  if (!version.ok()) return version.status();
  if (*version != 0) {
    return absl::InvalidArgumentError(
        StrCat("token identifier version ", static_cast<int>(*version), " is not 0"));
  }
  DelegationTokenIdentifier id;
  for (auto [field, what] :
       {std::pair{&id.owner, "token owner"}, std::pair{&id.renewer, "token renewer"},
        std::pair{&id.real_user, "token real user"}}) {
    absl::StatusOr<std::string> text = reader.ReadLengthPrefixed(what);
    if (!text.ok()) return text.status();
    *field = *std::move(text);
  }
  for (auto [field, what] : {std::pair{&id.issue_date_ms, "token issue date"},
                             std::pair{&id.max_date_ms, "token maximum date"}}) {
    absl::StatusOr<int64_t> value = reader.ReadVLong(what);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  for (auto [field, what] : {std::pair{&id.sequence_number, "token sequence number"},
                             std::pair{&id.master_key_id, "token master key id"}}) {
    absl::StatusOr<int32_t> value = reader.ReadVInt(what);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  if (reader.remaining() != 0) {
    return absl::InvalidArgumentError(
        StrCat(reader.remaining(), " bytes after the token identifier's master key id"));
  }
  return id;
}

absl::StatusOr<Token> DecodeTokenUrlString(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.empty()) return absl::InvalidArgumentError("token string: empty");
  if (text.size() % 4 == 1) {
    return absl::InvalidArgumentError(StrCat("token string: bad length ", text.size()));
  }
  std::string bytes;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    int value = Base64Value(text[i]);
    if (value < 0) {
      return absl::InvalidArgumentError(StrCat("token string: bad character at offset ", i));
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  WritableReader reader(bytes);
  Token token;
  std::string* fields[] = {&token.identifier, &token.password, &token.kind, &token.service};
  const char* names[] = {"identifier", "password", "kind", "service"};
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::string> field = reader.ReadLengthPrefixed(names[i]);
    if (!field.ok()) {
      return absl::InvalidArgumentError(StrCat("token string: ", ToStd(field.status().message())));
    }
    *fields[i] = std::move(*field);
  }
  if (reader.remaining() != 0) {
    return absl::InvalidArgumentError(
        StrCat("token string: ", reader.remaining(), " bytes after the service"));
  }
  return token;
}

absl::StatusOr<Credentials> Credentials::Parse(std::string_view bytes, std::string_view source) {
  if (bytes.size() < kMagic.size() + 1 || bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError(
        StrCat("credentials ", source, ": not a Hadoop token storage file (no \"HDTS\" header)"));
  }
  uint8_t version = static_cast<uint8_t>(bytes[kMagic.size()]);
  std::string_view body = bytes.substr(kMagic.size() + 1);
  absl::StatusOr<Credentials> parsed;
  switch (version) {
    case static_cast<uint8_t>(Format::kWritable):
      parsed = ParseWritable(body);
      break;
    case static_cast<uint8_t>(Format::kProtobuf):
      parsed = ParseProtobuf(body);
      break;
    default:
      return absl::InvalidArgumentError(StrCat("credentials ", source, ": unknown version ",
                                               static_cast<int>(version), " (tony reads 0 and 1)"));
  }
  if (!parsed.ok()) return InFile(parsed.status(), source);
  return parsed;
}

absl::StatusOr<Credentials> Credentials::ReadFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = tony::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return Parse(*bytes, StrCat("'", path, "'"));
}

std::string Credentials::Serialize(Format format) const {
  std::string out(kMagic);
  out.push_back(static_cast<char>(format));
  if (format == Format::kWritable) {
    WriteVInt(static_cast<int32_t>(tokens_.size()), &out);
    for (const auto& [alias, token] : tokens_) {
      WriteText(alias, &out);
      WriteText(token.identifier, &out);
      WriteText(token.password, &out);
      WriteText(token.kind, &out);
      WriteText(token.service, &out);
    }
    WriteVInt(static_cast<int32_t>(secrets_.size()), &out);
    for (const auto& [alias, secret] : secrets_) {
      WriteText(alias, &out);
      WriteText(secret, &out);
    }
    return out;
  }
  proto::CredentialsFile file;
  for (const auto& [alias, token] : tokens_) {
    proto::CredentialsEntry* entry = file.add_tokens();
    entry->set_alias(alias);
    proto::TokenMessage* t = entry->mutable_token();
    t->set_identifier(token.identifier);
    t->set_password(token.password);
    t->set_kind(token.kind);
    t->set_service(token.service);
  }
  for (const auto& [alias, secret] : secrets_) {
    proto::CredentialsEntry* entry = file.add_secrets();
    entry->set_alias(alias);
    entry->set_secret(secret);
  }
  AppendDelimited(file, &out);
  return out;
}

absl::Status Credentials::WriteFile(const std::string& path, Format format) const {
  return tony::WriteFile(path, Serialize(format), 0600);
}

void Credentials::AddToken(std::string alias, Token token) {
  Upsert(tokens_, std::move(alias), std::move(token));
}

void Credentials::AddSecret(std::string alias, std::string secret) {
  Upsert(secrets_, std::move(alias), std::move(secret));
}

const Token* Credentials::FindToken(std::string_view alias) const {
  for (const auto& [existing, token] : tokens_) {
    if (existing == alias) return &token;
  }
  return nullptr;
}

const Token* Credentials::FindTokenByKind(std::string_view kind, std::string_view service) const {
  for (const auto& entry : tokens_) {
    const Token& token = entry.second;
    if (token.kind == kind && (service.empty() || token.service == service)) return &token;
  }
  return nullptr;
}

absl::StatusOr<Token> Credentials::RequireTokenByKind(std::string_view kind,
                                                      std::string_view service) const {
  if (const Token* token = FindTokenByKind(kind, service)) return *token;
  std::vector<std::string> held;
  for (const auto& [alias, token] : tokens_) {
    held.push_back(StrCat(token.kind, token.service.empty() ? "" : "@", token.service));
  }
  return absl::NotFoundError(StrCat("no ", kind, " token", service.empty() ? "" : " for ", service,
                                    " in the credentials (they hold: ",
                                    held.empty() ? std::string("nothing") : Join(held, ", "), ")"));
}

const std::string* Credentials::FindSecret(std::string_view alias) const {
  for (const auto& [existing, secret] : secrets_) {
    if (existing == alias) return &secret;
  }
  return nullptr;
}

}  // namespace tony::hadoop
