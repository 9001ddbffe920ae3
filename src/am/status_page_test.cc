#include "am/status_page.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace tony::am {
namespace {

rpc::JobStatus SampleStatus() {
  rpc::JobStatus status;
  status.set_app_id("application_1700000000000_0007");
  status.set_state(rpc::JOB_RUNNING);
  rpc::TaskStatus* worker = status.add_tasks();
  worker->set_type("worker");
  worker->set_index(1);
  worker->set_state(rpc::TASK_FAILED);
  worker->set_host("nm1.example");
  worker->set_port(40123);
  worker->set_has_exit_code(true);
  worker->set_exit_code(3);
  worker->set_container_id("container_1700000000000_0007_01_000003");
  worker->set_log_dir("http://nm1.example:8042/node/containerlogs/container_1/alice");
  worker->set_diagnostics("Traceback: <script>alert('x')</script> & more");
  return status;
}

// GET (or another method) on 127.0.0.1:port; the whole answer, headers included.
std::string Request(int port, const std::string& method, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) answer.append(buffer, n);
  close(fd);
  return answer;
}

TEST(RenderStatusHtmlTest, ShowsEveryTaskAndEscapesWhatTheJobWrote) {
  const std::string html = RenderStatusHtml(SampleStatus());
  EXPECT_NE(html.find("application_1700000000000_0007: RUNNING"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>worker:1</td><td>FAILED</td><td>nm1.example:40123</td><td>3</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<a href=\"http://nm1.example:8042/node/containerlogs/container_1/alice\">"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more"),
            std::string::npos)
      << html;
  // A running job's page reloads itself; a complete one does not.
  EXPECT_NE(html.find("http-equiv=\"refresh\""), std::string::npos);
  rpc::JobStatus done = SampleStatus();
  done.set_complete(true);
  EXPECT_EQ(RenderStatusHtml(done).find("http-equiv=\"refresh\""), std::string::npos);
}

TEST(StatusPageTest, ServesTheLatestSnapshotAsHtmlAndJson) {
  StatusPage page;
  absl::StatusOr<int> port = page.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  ASSERT_GT(*port, 0);
  page.Update(SampleStatus());

  const std::string html = Request(*port, "GET", "/");
  EXPECT_TRUE(html.starts_with("HTTP/1.0 200") || html.starts_with("HTTP/1.1 200")) << html;
  EXPECT_NE(html.find("Content-Type: text/html"), std::string::npos) << html;
  EXPECT_NE(html.find("worker:1"), std::string::npos);

  rpc::JobStatus later = SampleStatus();
  later.set_state(rpc::JOB_FAILED);
  page.Update(later);
  const std::string json = Request(*port, "GET", "/status.json");
  EXPECT_NE(json.find("application/json"), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\":\"JOB_FAILED\""), std::string::npos) << json;
  // Behind YARN's web proxy the path keeps the proxy's prefix.
  EXPECT_NE(
      Request(*port, "GET", "/proxy/application_1700000000000_0007/status.json").find("JOB_FAILED"),
      std::string::npos);

  EXPECT_NE(Request(*port, "GET", "/secret").find(" 404 "), std::string::npos);
  EXPECT_NE(Request(*port, "POST", "/").find(" 405 "), std::string::npos);
  page.Stop();
  EXPECT_EQ(Request(*port, "GET", "/"), "");  // nothing listens any more
}

}  // namespace
}  // namespace tony::am
