#include "hadoop/common/credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/strings.h"
#include "hadoop/common/writable.h"

namespace tony::hadoop {
namespace {

using std::string_literals::operator""s;

std::string Message(const absl::Status& status) { return std::string(ToStd(status.message())); }

TEST(WritableTest, VLongHasHadoopBytes) {
  struct Case {
    int64_t value;
    std::string bytes;
  };
  const Case cases[] = {
      {0, "\x00"s},
      {127, "\x7f"s},
      {-1, "\xff"s},
      {-112, "\x90"s},
      {128, "\x8f\x80"s},
      {255, "\x8f\xff"s},
      {256, "\x8e\x01\x00"s},
      {-113, "\x87\x70"s},  // one's complement 112, one byte, negative marker -121
      {-257, "\x86\x01\x00"s},
      {std::numeric_limits<int64_t>::max(), "\x88\x7f\xff\xff\xff\xff\xff\xff\xff"s},
      {std::numeric_limits<int64_t>::min(), "\x80\x7f\xff\xff\xff\xff\xff\xff\xff"s},
  };
  for (const Case& c : cases) {
    std::string out;
    WriteVLong(c.value, &out);
    EXPECT_EQ(out, c.bytes) << c.value;
    WritableReader reader(out);
    absl::StatusOr<int64_t> back = reader.ReadVLong("value");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, c.value);
    EXPECT_EQ(reader.remaining(), 0u);
  }
}

TEST(WritableTest, VLongRoundTripsAcrossRanges) {
  for (int64_t v = -70000; v <= 70000; v += 7) {
    std::string out;
    WriteVLong(v, &out);
    WritableReader reader(out);
    absl::StatusOr<int64_t> back = reader.ReadVLong("v");
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(*back, v);
  }
}

TEST(WritableTest, RejectsTruncatedAndOversizedValues) {
  std::string big;
  WriteVLong(int64_t{1} << 40, &big);
  WritableReader too_big(big);
  EXPECT_FALSE(too_big.ReadVInt("count").ok());
  EXPECT_EQ(too_big.position(), 0u);

  const std::string truncated_bytes = "\x8e\x01"s;  // the reader borrows its bytes
  WritableReader truncated(truncated_bytes);
  absl::StatusOr<int64_t> value = truncated.ReadVLong("length of alias");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(Message(value.status()).find("length of alias"), std::string::npos);

  const std::string minus_one = "\xff"s;  // -1 as a length
  WritableReader negative(minus_one);
  EXPECT_FALSE(negative.ReadLengthPrefixed("identifier").ok());
  const std::string short_bytes =
      "\x05"
      "abc"s;
  WritableReader short_text(short_bytes);
  EXPECT_FALSE(short_text.ReadLengthPrefixed("kind").ok());
  EXPECT_EQ(short_text.position(), 0u);
}

Token SampleToken() {
  return Token{"\x00\x01\x02\xff"s, "secret-pw\x00"s, "YARN_AM_RM_TOKEN", "10.0.0.1:8030"};
}

Credentials SampleCredentials() {
  Credentials credentials;
  credentials.AddToken("appattempt_1_0001_000001", SampleToken());
  credentials.AddToken("hdfs", Token{"id2", "pw2", "HDFS_DELEGATION_TOKEN", "ha-hdfs:nn"});
  credentials.AddSecret("tony.secret", "\x01\x02\x03"s);
  return credentials;
}

// A version-0 file built by hand from the Writable layout.
std::string HandBuiltWritableFile() {
  std::string f = "HDTS\x00"s;
  f += "\x01"s;  // one token
  f += "\x06"
       "alias1"s;            // Text alias
  f += "\x03\x01\x02\x03"s;  // identifier
  f += "\x02"
       "pw"s;  // password
  f += "\x10"
       "YARN_AM_RM_TOKEN"s;  // Text kind (16 bytes)
  f += "\x0d"
       "10.0.0.1:8030"s;  // Text service (13 bytes)
  f += "\x01"s;           // one secret
  f += "\x03"
       "key"s;                   // Text alias
  f += "\x04\x00\x01\x02\x03"s;  // VInt length + bytes
  return f;
}

TEST(CredentialsTest, ReadsHandBuiltWritableFile) {
  absl::StatusOr<Credentials> c = Credentials::Parse(HandBuiltWritableFile(), "test");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->tokens().size(), 1u);
  EXPECT_EQ(c->tokens()[0].first, "alias1");
  const Token& t = c->tokens()[0].second;
  EXPECT_EQ(t.identifier, "\x01\x02\x03"s);
  EXPECT_EQ(t.password, "pw");
  EXPECT_EQ(t.kind, "YARN_AM_RM_TOKEN");
  EXPECT_EQ(t.service, "10.0.0.1:8030");
  ASSERT_NE(c->FindSecret("key"), nullptr);
  EXPECT_EQ(*c->FindSecret("key"), "\x00\x01\x02\x03"s);
}

TEST(CredentialsTest, WritesTheWritableLayoutByteForByte) {
  Credentials c;
  c.AddToken("alias1", Token{"\x01\x02\x03"s, "pw", "YARN_AM_RM_TOKEN", "10.0.0.1:8030"});
  c.AddSecret("key", "\x00\x01\x02\x03"s);
  EXPECT_EQ(c.Serialize(Credentials::Format::kWritable), HandBuiltWritableFile());
}

TEST(CredentialsTest, ReadsHandBuiltProtobufFile) {
  // TokenMessage: identifier(1), password(2), kind(3), service(4).
  std::string token =
      "\x0a\x02"
      "id"s +
      "\x12\x02"
      "pw"s +
      "\x1a\x04"
      "KIND"s +
      "\x22\x03"
      "svc"s;
  // CredentialsEntry for a token: alias(1), token(2).
  std::string token_entry =
      "\x0a\x01"
      "a"s +
      "\x12"s + static_cast<char>(token.size()) + token;
  // CredentialsEntry for a secret: alias(1), secret(3).
  std::string secret_entry =
      "\x0a\x01"
      "s"s +
      "\x1a\x02"
      "xy"s;
  // CredentialsFile: tokens(1), secrets(2).
  std::string file = "\x0a"s + static_cast<char>(token_entry.size()) + token_entry + "\x12"s +
                     static_cast<char>(secret_entry.size()) + secret_entry;
  std::string bytes = "HDTS\x01"s + static_cast<char>(file.size()) + file;

  absl::StatusOr<Credentials> c = Credentials::Parse(bytes, "test");
  ASSERT_TRUE(c.ok()) << c.status();
  const Token* t = c->FindToken("a");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t, (Token{"id", "pw", "KIND", "svc"}));
  ASSERT_NE(c->FindSecret("s"), nullptr);
  EXPECT_EQ(*c->FindSecret("s"), "xy");
  // Writing the same content gives the same bytes.
  EXPECT_EQ(c->Serialize(Credentials::Format::kProtobuf), bytes);
}

TEST(CredentialsTest, RoundTripsInBothFormats) {
  Credentials original = SampleCredentials();
  for (Credentials::Format format :
       {Credentials::Format::kWritable, Credentials::Format::kProtobuf}) {
    std::string bytes = original.Serialize(format);
    EXPECT_EQ(bytes.substr(0, 5), "HDTS"s + static_cast<char>(format));
    absl::StatusOr<Credentials> back = Credentials::Parse(bytes, "round trip");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, original);
  }
}

TEST(CredentialsTest, FindsTokensByKindAndService) {
  Credentials c = SampleCredentials();
  ASSERT_NE(c.FindTokenByKind("YARN_AM_RM_TOKEN"), nullptr);
  EXPECT_EQ(c.FindTokenByKind("YARN_AM_RM_TOKEN")->password, "secret-pw\x00"s);
  EXPECT_NE(c.FindTokenByKind("HDFS_DELEGATION_TOKEN", "ha-hdfs:nn"), nullptr);
  EXPECT_EQ(c.FindTokenByKind("HDFS_DELEGATION_TOKEN", "other:1"), nullptr);
  EXPECT_EQ(c.FindTokenByKind("RM_DELEGATION_TOKEN"), nullptr);
  absl::StatusOr<Token> missing = c.RequireTokenByKind("RM_DELEGATION_TOKEN");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(Message(missing.status()).find("YARN_AM_RM_TOKEN@10.0.0.1:8030"), std::string::npos)
      << missing.status();
}

TEST(CredentialsTest, AddingAnExistingAliasReplacesIt) {
  Credentials c = SampleCredentials();
  c.AddToken("hdfs", Token{"new", "pw", "HDFS_DELEGATION_TOKEN", ""});
  EXPECT_EQ(c.tokens().size(), 2u);
  EXPECT_EQ(c.FindToken("hdfs")->identifier, "new");
}

TEST(CredentialsTest, RejectsBadFilesNamingTheSource) {
  std::string good_v0 = SampleCredentials().Serialize(Credentials::Format::kWritable);
  std::string good_v1 = SampleCredentials().Serialize(Credentials::Format::kProtobuf);
  for (const std::string& good : {good_v0, good_v1}) {
    for (size_t n = 0; n < good.size(); ++n) {
      absl::StatusOr<Credentials> c = Credentials::Parse(good.substr(0, n), "/x/tokens");
      ASSERT_FALSE(c.ok()) << "prefix of " << n << " bytes of version " << int{good[4]};
      EXPECT_NE(Message(c.status()).find("/x/tokens"), std::string::npos) << c.status();
    }
  }
  absl::StatusOr<Credentials> magic = Credentials::Parse("HDTX\x00\x00\x00"s, "f");
  ASSERT_FALSE(magic.ok());
  EXPECT_NE(Message(magic.status()).find("HDTS"), std::string::npos);
  absl::StatusOr<Credentials> version = Credentials::Parse("HDTS\x02\x00\x00"s, "f");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(Message(version.status()).find("unknown version 2"), std::string::npos);
  EXPECT_FALSE(Credentials::Parse("HDTS\x00\xff\x00"s, "f").ok());   // negative token count
  EXPECT_FALSE(Credentials::Parse("HDTS\x00\x00\x00z"s, "f").ok());  // trailing byte
  // A huge count with no entries fails on the first entry, without allocating for the count.
  EXPECT_FALSE(Credentials::Parse("HDTS\x00\x8c\x7f\xff\xff\xff"s, "f").ok());
}

TEST(CredentialsTest, WritesAndReadsFilesWithPrivateMode) {
  char dir_template[] = "/tmp/tony_credentials_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string path = StrCat(dir_template, "/container_tokens");
  Credentials original = SampleCredentials();
  ASSERT_TRUE(original.WriteFile(path, Credentials::Format::kWritable).ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  absl::StatusOr<Credentials> back = Credentials::ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, original);
  absl::StatusOr<Credentials> missing = Credentials::ReadFile(StrCat(dir_template, "/none"));
  EXPECT_FALSE(missing.ok());
  unlink(path.c_str());
  rmdir(dir_template);
}

TEST(TokenUrlStringTest, IsUrlSafeUnpaddedBase64OfTheWritableToken) {
  // identifier "ab", password "c", kind "K", service "s": Writable bytes 02 61 62 01 63 01 4b 01 73
  Token token{"ab", "c", "K", "s"};
  EXPECT_EQ(EncodeTokenUrlString(token), "AmFiAWMBSwFz");
  absl::StatusOr<Token> back = DecodeTokenUrlString("AmFiAWMBSwFz");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, token);
  // Bytes that standard base64 writes as '+' and '/' come out as '-' and '_'.
  Token binary{std::string("\xfb\xff\xbf", 3), "", "", ""};
  std::string encoded = EncodeTokenUrlString(binary);
  EXPECT_EQ(encoded.find_first_of("+/="), std::string::npos) << encoded;
  EXPECT_EQ(*DecodeTokenUrlString(encoded), binary);
}

TEST(TokenUrlStringTest, RejectsWhatIsNotAToken) {
  EXPECT_FALSE(DecodeTokenUrlString("").ok());
  EXPECT_FALSE(DecodeTokenUrlString("A").ok());
  EXPECT_FALSE(DecodeTokenUrlString("AmFi*WMBSwFz").ok());
  EXPECT_FALSE(DecodeTokenUrlString("AmFiAWMBSw").ok());      // service missing
  EXPECT_FALSE(DecodeTokenUrlString("AmFiAWMBSwFzAA").ok());  // a byte after the service
  EXPECT_FALSE(DecodeTokenUrlString("fw").ok());              // a length past the end
}

TEST(DelegationTokenIdentifierTest, DecodesHadoopsWritableLayout) {
  // version 0, owner "alice", renewer "yarn", no real user, issued 1700000000000, dead at
  // 1700604800000 (7 days later), sequence number 7, master key 300: as Hadoop writes them.
  const std::string bytes(
      "\x00"
      "\x05"
      "alice"
      "\x04"
      "yarn"
      "\x00"
      "\x8a\x01\x8b\xcf\xe5\x68\x00"
      "\x8a\x01\x8b\xf3\xf1\xec\x00"
      "\x07"
      "\x8e\x01\x2c",
      31);
  absl::StatusOr<DelegationTokenIdentifier> id = DecodeDelegationTokenIdentifier(bytes);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->owner, "alice");
  EXPECT_EQ(id->renewer, "yarn");
  EXPECT_EQ(id->real_user, "");
  EXPECT_EQ(id->issue_date_ms, 1700000000000);
  EXPECT_EQ(id->max_date_ms, 1700604800000);
  EXPECT_EQ(id->sequence_number, 7);
  EXPECT_EQ(id->master_key_id, 300);

  // Every truncation fails with an error, as does a byte too many or another version.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeDelegationTokenIdentifier(bytes.substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(DecodeDelegationTokenIdentifier(bytes + '\x00').ok());
  std::string other = bytes;
  other[0] = 1;
  absl::StatusOr<DelegationTokenIdentifier> versioned = DecodeDelegationTokenIdentifier(other);
  ASSERT_FALSE(versioned.ok());
  EXPECT_NE(versioned.status().message().find("version 1"), std::string::npos)
      << versioned.status();
}

}  // namespace
}  // namespace tony::hadoop
