#include "common/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tony {
namespace {

namespace fs = std::filesystem;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// One entry of a hand-made zip: a file with `content`, or a symlink to `content`.
struct RawEntry {
  std::string name;
  std::string content;
  bool symlink = false;
};

// Writes a zip with exactly these entry names, unchecked, as an attacker could.
void WriteRawZip(const std::string& path, const std::vector<RawEntry>& entries) {
  archive* writer = archive_write_new();
  ASSERT_EQ(archive_write_set_format_zip(writer), ARCHIVE_OK);
  ASSERT_EQ(archive_write_open_filename(writer, path.c_str()), ARCHIVE_OK);
  for (const RawEntry& raw : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, raw.name.c_str());
    if (raw.symlink) {
      archive_entry_set_mode(entry, AE_IFLNK | 0777);
      archive_entry_set_symlink(entry, raw.content.c_str());
      archive_entry_set_size(entry, 0);
    } else {
      archive_entry_set_mode(entry, AE_IFREG | 0644);
      archive_entry_set_size(entry, static_cast<la_int64_t>(raw.content.size()));
    }
    ASSERT_EQ(archive_write_header(writer, entry), ARCHIVE_OK);
    if (!raw.symlink) archive_write_data(writer, raw.content.data(), raw.content.size());
    archive_entry_free(entry);
  }
  ASSERT_EQ(archive_write_close(writer), ARCHIVE_OK);
  archive_write_free(writer);
}

std::string RandomBytes(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xff);
  return bytes;
}

// Output of a shell command, "" when it cannot start.
std::string CommandOutput(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[256];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  pclose(pipe);
  return output;
}

class ArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/tony_archive_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }

  [[nodiscard]] std::string Path(const std::string& relative) const {
    return dir_ + "/" + relative;
  }

  void Write(const std::string& relative, const std::string& content, fs::perms mode = {}) {
    fs::create_directories(fs::path(Path(relative)).parent_path());
    std::ofstream(Path(relative), std::ios::binary) << content;
    if (mode != fs::perms{}) fs::permissions(Path(relative), mode);
  }

  [[nodiscard]] std::string Read(const std::string& relative) const {
    std::ifstream in(Path(relative), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }

  [[nodiscard]] bool IsExecutable(const std::string& relative) const {
    return (fs::status(Path(relative)).permissions() & fs::perms::owner_exec) != fs::perms::none;
  }

  // The names below `relative`, sorted, directories ending in '/'.
  [[nodiscard]] std::vector<std::string> Tree(const std::string& relative) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(Path(relative))) {
      std::string name = fs::relative(entry.path(), Path(relative)).string();
      if (entry.is_directory() && !entry.is_symlink()) name += "/";
      names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(ArchiveTest, ZipRoundTripKeepsContentModesAndSymlinks) {
  const std::string big = RandomBytes(1 << 20, 1);
  Write("src/a/b/c/deep.txt", "deep\n");
  Write("src/empty.txt", "");
  Write("src/data.bin", big);
  Write("src/bin/run.sh", "#!/bin/sh\necho ran-ok\n", fs::perms(0755));
  fs::create_directories(Path("src/emptydir"));
  fs::create_symlink("a/b/c/deep.txt", Path("src/link"));

  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("tree.zip")).ok());
  EXPECT_TRUE(LooksLikeZip(Path("tree.zip")));
  EXPECT_TRUE(CheckArchiveReadable(Path("tree.zip")).ok());
  absl::Status extracted = ExtractArchive(Path("tree.zip"), Path("out/nested"));
  ASSERT_TRUE(extracted.ok()) << extracted;

  EXPECT_EQ(Tree("out/nested"), Tree("src"));
  EXPECT_EQ(Read("out/nested/a/b/c/deep.txt"), "deep\n");
  EXPECT_EQ(Read("out/nested/empty.txt"), "");
  EXPECT_EQ(Read("out/nested/data.bin"), big);
  EXPECT_TRUE(IsExecutable("out/nested/bin/run.sh"));
  EXPECT_FALSE(IsExecutable("out/nested/data.bin"));
  EXPECT_EQ(CommandOutput(Path("out/nested/bin/run.sh")), "ran-ok\n");
  EXPECT_TRUE(fs::is_symlink(Path("out/nested/link")));
  EXPECT_EQ(fs::read_symlink(Path("out/nested/link")), "a/b/c/deep.txt");
  EXPECT_EQ(Read("out/nested/link"), "deep\n");
  EXPECT_TRUE(fs::is_directory(Path("out/nested/emptydir")));
}

TEST_F(ArchiveTest, ZipRoundTripKeepsNonAsciiNames) {
  Write("src/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac.txt", "utf8");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("names.zip")).ok());
  absl::Status extracted = ExtractArchive(Path("names.zip"), Path("out"));
  ASSERT_TRUE(extracted.ok()) << extracted;
  EXPECT_EQ(Read("out/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac.txt"), "utf8");
}

TEST_F(ArchiveTest, ZipInsideTheDirectoryIsNotPackedIntoItselfAndNoTempIsLeft) {
  Write("src/file.txt", "x");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("src/self.zip")).ok());
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("src/self.zip")).ok());
  EXPECT_EQ(Tree("src"), (std::vector<std::string>{"file.txt", "self.zip"}));
  ASSERT_TRUE(ExtractArchive(Path("src/self.zip"), Path("out")).ok());
  EXPECT_EQ(Tree("out"), std::vector<std::string>{"file.txt"});
}

TEST_F(ArchiveTest, CreateZipErrorsNameThePath) {
  absl::Status missing = CreateZipFromDirectory(Path("nope"), Path("x.zip"));
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(Message(missing).find(Path("nope")), std::string::npos) << missing;

  Write("src/file.txt", "x");
  absl::Status no_parent = CreateZipFromDirectory(Path("src"), Path("no/such/dir/x.zip"));
  EXPECT_FALSE(no_parent.ok());
  EXPECT_NE(Message(no_parent).find(Path("no/such/dir/x.zip")), std::string::npos) << no_parent;

  absl::Status not_dir = CreateZipFromDirectory(Path("src/file.txt"), Path("x.zip"));
  EXPECT_FALSE(not_dir.ok());
  EXPECT_NE(Message(not_dir).find(Path("src/file.txt")), std::string::npos) << not_dir;
  EXPECT_FALSE(fs::exists(Path("x.zip")));
}

TEST_F(ArchiveTest, ExtractsTarGzAndTarMadeByTheTarCommand) {
  Write("src/pkg/module.py", "print('hi')\n");
  Write("src/tool.sh", "#!/bin/sh\necho tool\n", fs::perms(0755));
  ASSERT_EQ(std::system(("tar -czf " + Path("x.tar.gz") + " -C " + Path("src") + " .").c_str()), 0);
  ASSERT_EQ(std::system(("tar -cf " + Path("x.tar") + " -C " + Path("src") + " .").c_str()), 0);
  EXPECT_FALSE(LooksLikeZip(Path("x.tar.gz")));
  EXPECT_TRUE(CheckArchiveReadable(Path("x.tar.gz")).ok());

  for (const std::string name : {"x.tar.gz", "x.tar"}) {
    const std::string out = "out_" + name;
    absl::Status extracted = ExtractArchive(Path(name), Path(out));
    ASSERT_TRUE(extracted.ok()) << extracted;
    EXPECT_EQ(Read(out + "/pkg/module.py"), "print('hi')\n");
    EXPECT_TRUE(IsExecutable(out + "/tool.sh"));
    EXPECT_EQ(CommandOutput(Path(out + "/tool.sh")), "tool\n");
  }
}

TEST_F(ArchiveTest, ExtractsIntoADestinationReachedThroughASymlink) {
  Write("src/file.txt", "x");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("x.zip")).ok());
  fs::create_directories(Path("real"));
  fs::create_directory_symlink("real", Path("alias"));
  absl::Status extracted = ExtractArchive(Path("x.zip"), Path("alias/out"));
  ASSERT_TRUE(extracted.ok()) << extracted;
  EXPECT_EQ(Read("real/out/file.txt"), "x");
}

TEST_F(ArchiveTest, NonArchiveIsRejectedWithItsName) {
  Write("notes.txt", "just some text\nnot an archive\n");
  absl::Status check = CheckArchiveReadable(Path("notes.txt"));
  EXPECT_EQ(check.code(), absl::StatusCode::kInvalidArgument) << check;
  EXPECT_NE(Message(check).find("'" + Path("notes.txt") + "' is not a zip or tar archive"),
            std::string::npos)
      << check;

  Write("random.bin", RandomBytes(4096, 2));
  absl::Status extracted = ExtractArchive(Path("random.bin"), Path("out"));
  EXPECT_EQ(extracted.code(), absl::StatusCode::kInvalidArgument) << extracted;
  EXPECT_NE(Message(extracted).find(Path("random.bin")), std::string::npos) << extracted;

  Write("empty", "");
  EXPECT_EQ(ExtractArchive(Path("empty"), Path("out")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(CheckArchiveReadable(Path("empty")).ok());
}

TEST_F(ArchiveTest, MissingOrUnreadableArchiveIsNamed) {
  absl::Status missing = ExtractArchive(Path("missing.zip"), Path("out"));
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_NE(Message(missing).find("cannot read archive '" + Path("missing.zip") + "'"),
            std::string::npos)
      << missing;
  EXPECT_EQ(CheckArchiveReadable(Path("missing.zip")).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(LooksLikeZip(Path("missing.zip")));

  if (geteuid() == 0) GTEST_SKIP() << "root reads files without read permission";
  Write("src/file.txt", "x");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("locked.zip")).ok());
  fs::permissions(Path("locked.zip"), fs::perms::none);
  absl::Status locked = CheckArchiveReadable(Path("locked.zip"));
  EXPECT_EQ(locked.code(), absl::StatusCode::kPermissionDenied) << locked;
  EXPECT_NE(Message(locked).find(Path("locked.zip")), std::string::npos) << locked;
}

TEST_F(ArchiveTest, TruncatedZipIsAnErrorNamingIt) {
  Write("src/small.txt", "small");
  Write("src/data.bin", RandomBytes(1 << 20, 3));
  Write("src/z_last.txt", "last");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("x.zip")).ok());
  for (uintmax_t size :
       {fs::file_size(Path("x.zip")) / 2, fs::file_size(Path("x.zip")) - 10, uintmax_t{30}}) {
    SCOPED_TRACE(size);
    fs::copy_file(Path("x.zip"), Path("cut.zip"), fs::copy_options::overwrite_existing);
    fs::resize_file(Path("cut.zip"), size);
    absl::Status extracted = ExtractArchive(Path("cut.zip"), Path("out"));
    EXPECT_FALSE(extracted.ok());
    EXPECT_NE(Message(extracted).find(Path("cut.zip")), std::string::npos) << extracted;
    fs::remove_all(Path("out"));
  }
}

TEST_F(ArchiveTest, TruncatedTarGzIsAnErrorNamingIt) {
  Write("src/data.bin", RandomBytes(1 << 20, 5));
  ASSERT_EQ(std::system(("tar -czf " + Path("x.tar.gz") + " -C " + Path("src") + " .").c_str()), 0);
  for (uintmax_t size : {fs::file_size(Path("x.tar.gz")) / 2, uintmax_t{100}}) {
    SCOPED_TRACE(size);
    fs::resize_file(Path("x.tar.gz"), size);
    absl::Status extracted = ExtractArchive(Path("x.tar.gz"), Path("out"));
    EXPECT_EQ(extracted.code(), absl::StatusCode::kDataLoss) << extracted;
    EXPECT_NE(Message(extracted).find(Path("x.tar.gz")), std::string::npos) << extracted;
  }
}

TEST_F(ArchiveTest, CorruptZipDataIsAnErrorNamingIt) {
  Write("src/data.bin", RandomBytes(1 << 20, 4));
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("x.zip")).ok());
  {
    std::fstream zip(Path("x.zip"), std::ios::in | std::ios::out | std::ios::binary);
    zip.seekp(std::streamoff{512} * 1024);
    zip.write("corruption", 10);
  }
  absl::Status extracted = ExtractArchive(Path("x.zip"), Path("out"));
  EXPECT_EQ(extracted.code(), absl::StatusCode::kDataLoss) << extracted;
  EXPECT_NE(Message(extracted).find(Path("x.zip")), std::string::npos) << extracted;
}

TEST_F(ArchiveTest, EntryOutsideTheDestinationIsRejected) {
  const std::vector<std::vector<RawEntry>> attacks = {
      {{"ok.txt", "fine"}, {"../evil", "pwned"}},
      {{"sub/../../evil", "pwned"}},
      {{Path("evil"), "pwned"}},
      {{"evil", "/etc", true}},
      {{"sub/evil", "../../evil", true}},
      {{"b", ".", true}, {"evil", "b/../..", true}},
  };
  for (const std::vector<RawEntry>& attack : attacks) {
    const std::string bad_name = attack.back().name;
    SCOPED_TRACE(bad_name);
    WriteRawZip(Path("evil.zip"), attack);
    absl::Status check = CheckArchiveReadable(Path("evil.zip"));
    EXPECT_EQ(check.code(), absl::StatusCode::kInvalidArgument) << check;
    absl::Status extracted = ExtractArchive(Path("evil.zip"), Path("out/dest"));
    EXPECT_EQ(extracted.code(), absl::StatusCode::kInvalidArgument) << extracted;
    EXPECT_NE(Message(extracted).find("'" + bad_name + "'"), std::string::npos) << extracted;
    EXPECT_FALSE(fs::exists(fs::symlink_status(Path("evil"))));
    EXPECT_FALSE(fs::exists(fs::symlink_status(Path("out/evil"))));
    EXPECT_FALSE(fs::exists(fs::symlink_status(Path("out/dest/evil"))));
    fs::remove_all(Path("out"));
  }
}

TEST_F(ArchiveTest, EntryThroughASymlinkIsRejected) {
  fs::create_directories(Path("outside"));
  WriteRawZip(Path("evil.zip"), {{"dir", Path("outside"), true}, {"dir/evil", "pwned"}});
  // The absolute symlink is refused first; a relative link inside is refused at the write.
  EXPECT_FALSE(ExtractArchive(Path("evil.zip"), Path("out")).ok());
  WriteRawZip(Path("evil2.zip"), {{"dir", ".", true}, {"dir/evil", "pwned"}});
  absl::Status extracted = ExtractArchive(Path("evil2.zip"), Path("out"));
  EXPECT_FALSE(extracted.ok());
  EXPECT_NE(Message(extracted).find("'dir/evil'"), std::string::npos) << extracted;
  EXPECT_TRUE(fs::is_empty(Path("outside")));
  EXPECT_FALSE(fs::exists(Path("out/evil")));
}

TEST_F(ArchiveTest, LooksLikeZip) {
  Write("src/file.txt", "x");
  ASSERT_TRUE(CreateZipFromDirectory(Path("src"), Path("x.zip")).ok());
  fs::create_directories(Path("empty"));
  ASSERT_TRUE(CreateZipFromDirectory(Path("empty"), Path("empty.zip")).ok());
  EXPECT_TRUE(LooksLikeZip(Path("x.zip")));
  EXPECT_TRUE(LooksLikeZip(Path("empty.zip")));
  EXPECT_TRUE(CheckArchiveReadable(Path("empty.zip")).ok());
  Write("text", "PK");
  EXPECT_FALSE(LooksLikeZip(Path("text")));
  Write("text", "hello world");
  EXPECT_FALSE(LooksLikeZip(Path("text")));
  EXPECT_FALSE(LooksLikeZip(Path("src")));
  EXPECT_FALSE(LooksLikeZip(Path("nope")));
}

}  // namespace
}  // namespace tony
