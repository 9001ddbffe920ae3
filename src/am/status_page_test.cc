#include "am/status_page.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/http_test_client.h"
#include "common/strings.h"
#include "gtest/gtest.h"

namespace tony::am {
namespace {

using namespace ::tony::http_test;  // NOLINT(google-build-using-namespace)

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
  status.set_diagnostics("worker:1 failed: token=hunter2");
  return status;
}

// Connections that send half a request and hold on, as a slow or hostile client does; closed when
// the test ends.
class HalfSentRequests {
 public:
  HalfSentRequests(int port, int count, const char* source = "127.0.0.1") {
    const std::string half = "GET / HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < count; ++i) {
      const int fd = Connect(port, source);
      if (fd < 0) continue;
      (void)!write(fd, half.data(), half.size());
      fds_.push_back(fd);
    }
  }
  ~HalfSentRequests() {
    for (int fd : fds_) close(fd);
  }
  HalfSentRequests(const HalfSentRequests&) = delete;
  HalfSentRequests& operator=(const HalfSentRequests&) = delete;
  [[nodiscard]] size_t size() const { return fds_.size(); }

 private:
  std::vector<int> fds_;
};

constexpr char kProxyBase[] = "http://proxy.example:8088/proxy/application_1700000000000_0007";
constexpr char kRedirectBase[] =
    "http://proxy.example:8088/proxy/redirect/application_1700000000000_0007";

TEST(RenderStatusHtmlTest, ShowsEveryTaskAndEscapesWhatTheJobWrote) {
  const std::string html = RenderStatusHtml(SampleStatus());
  EXPECT_NE(html.find("application_1700000000000_0007 <span class=\"RUNNING\">RUNNING</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>worker:1</td><td class=\"FAILED\">FAILED</td><td>1</td>"
                      "<td>nm1.example:40123</td><td>3</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<a class=\"log\" "
                      "href=\"http://nm1.example:8042/node/containerlogs/container_1/alice\">"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("TensorBoard"), std::string::npos);
  rpc::JobStatus with_tensorboard = SampleStatus();
  with_tensorboard.set_tensorboard_url("http://nm1.example:6006/");
  EXPECT_NE(RenderStatusHtml(with_tensorboard)
                .find("TensorBoard: <a id=\"tensorboard\" href=\"http://nm1.example:6006/\">"
                      "http://nm1.example:6006/</a>"),
            std::string::npos);
  with_tensorboard.set_tensorboard_url("javascript:alert(1)");
  EXPECT_EQ(RenderStatusHtml(with_tensorboard).find("href=\"javascript"), std::string::npos);
  // A running job's page reloads itself; a complete one does not.
  EXPECT_NE(html.find("http-equiv=\"refresh\""), std::string::npos);
  rpc::JobStatus done = SampleStatus();
  done.set_complete(true);
  EXPECT_EQ(RenderStatusHtml(done).find("http-equiv=\"refresh\""), std::string::npos);
}

// The AM's page is the history's job page: with the live events and samples it draws the same
// timeline and plots as `tony history` does for the ended job.
TEST(RenderStatusHtmlTest, IsTheHistorysJobPageWithTheLiveEventsAndSamples) {
  LiveHistory live;
  live.name = "mnist";
  live.user = "alice";
  history::HistoryEvent started;
  started.time_ms = 1000;
  started.kind = history::kEventTaskStarted;
  started.task = "worker:1";
  live.events = {started};
  for (int i = 0; i < 3; ++i) {
    history::MetricSample sample;
    sample.time_ms = 1000 + i * 1000;
    sample.task = "worker:1";
    sample.cpu_seconds = i;
    sample.rss_bytes = int64_t{64} << 20;
    live.metrics.push_back(sample);
  }
  live.config = {{"tony.worker.instances", "2", "--conf"}};
  const std::string html = RenderStatusHtml(SampleStatus(), live);
  EXPECT_NE(html.find("<td>mnist</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<g class=\"attempt\" data-task=\"worker:1\""), std::string::npos) << html;
  EXPECT_NE(html.find("data-measure=\"cpu\""), std::string::npos) << html;
  EXPECT_NE(html.find("data-measure=\"memory\""), std::string::npos) << html;
  EXPECT_NE(html.find("<td>tony.worker.instances</td><td>2</td><td>--conf</td>"), std::string::npos)
      << html;
}

TEST(StatusPageTest, ServesTheSnapshotAsPrometheusMetrics) {
  StatusPage page;
  absl::StatusOr<int> port = page.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  LiveHistory live;
  live.name = "mnist";
  history::MetricSample sample;
  sample.time_ms = 1000;
  sample.task = "worker:1";
  sample.cpu_seconds = 2.5;
  sample.rss_bytes = int64_t{64} << 20;
  live.metrics = {sample};
  rpc::JobStatus status = SampleStatus();
  status.mutable_tasks(0)->set_heartbeats(17);
  status.mutable_tasks(0)->add_previous_attempts()->set_exit_code(-102);
  page.Update(status, live);
  for (const char* path : {"/metrics", "/proxy/application_1700000000000_0007/metrics"}) {
    const std::string answer = Request(*port, "GET", path);
    EXPECT_TRUE(IsStatus(answer, 200)) << answer;
    EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
    const std::string body = BodyOf(answer);
    const std::string task =
        R"({app_id="application_1700000000000_0007",task_type="worker",task_index="1"})";
    EXPECT_NE(body.find("tony_task_heartbeats_total" + task + " 17"), std::string::npos) << body;
    EXPECT_NE(body.find("tony_task_cpu_seconds_total" + task + " 2.5"), std::string::npos);
    EXPECT_NE(body.find("tony_task_memory_bytes" + task + " 67108864"), std::string::npos);
    EXPECT_NE(body.find(R"(tony_job_task_restarts_total{app_id="application_1700000000000_0007",)"
                        R"(cause="preempted"} 1)"),
              std::string::npos);
    EXPECT_NE(body.find(R"(tony_job_info{app_id="application_1700000000000_0007",name="mnist",)"),
              std::string::npos);
  }
  page.Stop();
}

TEST(StatusPageTest, ServesTheLatestSnapshotAsHtmlAndJson) {
  StatusPage page;
  absl::StatusOr<int> port = page.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  ASSERT_GT(*port, 0);
  page.Update(SampleStatus());

  const std::string html = Request(*port, "GET", "/");
  EXPECT_TRUE(IsStatus(html, 200)) << html;
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
  // A NUL does not cut a path short into one that names a page.
  for (const char* path : {"/status.json%00", "/status.json%00.png", "/%00"}) {
    const std::string answer = Request(*port, "GET", path);
    EXPECT_EQ(answer.find("JOB_FAILED"), std::string::npos) << path << answer;
    EXPECT_NE(answer.find(" 404 "), std::string::npos) << path << answer;
  }
  page.Stop();
  EXPECT_EQ(Request(*port, "GET", "/"), "");  // nothing listens any more
}

TEST(StatusPageTest, SendsPeersThatAreNotTheProxyToTheProxyWithoutTheJob) {
  StatusPage page;
  absl::StatusOr<int> port =
      page.Start(StatusPageOptions{.bind_host = "127.0.0.1",
                                   .proxy_addresses = {"10.0.0.5", "fd00::5"},
                                   .proxy_base_url = kProxyBase});
  ASSERT_TRUE(port.ok()) << port.status();
  page.Update(SampleStatus());

  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/"},
                                                        {"GET", "/status.json"},
                                                        {"HEAD", "/status.json"},
                                                        {"GET", "/metrics"},
                                                        {"POST", "/"}}) {
    const std::string answer = Request(*port, method, path);
    EXPECT_TRUE(IsStatus(answer, 302)) << method << " " << path << ": " << answer;
    EXPECT_NE(answer.find(StrCat("\r\nLocation: ", kRedirectBase, path, "\r\n")), std::string::npos)
        << answer;
    EXPECT_EQ(answer.find("worker"), std::string::npos) << answer;
    EXPECT_EQ(answer.find("Traceback"), std::string::npos) << answer;
    EXPECT_EQ(answer.find("hunter2"), std::string::npos) << answer;
  }
  // Whatever the path holds stays inside the Location header.
  const std::string odd = Request(*port, "GET", "/a%0d%0aSet-Cookie:%20x=1");
  EXPECT_TRUE(IsStatus(odd, 302)) << odd;
  EXPECT_EQ(odd.find("\r\nSet-Cookie"), std::string::npos) << odd;
  EXPECT_NE(odd.find(StrCat("\r\nLocation: ", kRedirectBase, "/a%")), std::string::npos) << odd;
}

TEST(StatusPageTest, ServesTheProxyEverythingEscaped) {
  StatusPage page;
  absl::StatusOr<int> port =
      page.Start(StatusPageOptions{.bind_host = "127.0.0.1",
                                   .proxy_addresses = {"10.0.0.5", "127.0.0.1"},
                                   .proxy_base_url = kProxyBase});
  ASSERT_TRUE(port.ok()) << port.status();
  page.Update(SampleStatus());

  const std::string html = Request(*port, "GET", "/");
  EXPECT_TRUE(IsStatus(html, 200)) << html;
  EXPECT_NE(html.find("worker:1 failed: token=hunter2"), std::string::npos) << html;
  EXPECT_NE(html.find("Traceback: &lt;script&gt;"), std::string::npos) << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  const std::string json =
      Request(*port, "GET", "/proxy/application_1700000000000_0007/status.json");
  EXPECT_TRUE(IsStatus(json, 200)) << json;
  EXPECT_NE(json.find("token=hunter2"), std::string::npos) << json;
  EXPECT_NE(json.find("Traceback"), std::string::npos) << json;
}

TEST(StatusPageTest, RefusesProxySettingsItCannotEnforce) {
  StatusPage page;
  EXPECT_EQ(page.Start(StatusPageOptions{.bind_host = "127.0.0.1", .proxy_addresses = {"10.0.0.5"}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(page.Start(StatusPageOptions{.bind_host = "127.0.0.1", .proxy_base_url = kProxyBase})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<int> named = page.Start(StatusPageOptions{
      .bind_host = "127.0.0.1", .proxy_addresses = {"rm.example"}, .proxy_base_url = kProxyBase});
  EXPECT_EQ(named.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(named.status().message().find("rm.example"), std::string_view::npos);
  for (const char* url :
       {"ftp://rm:8088/proxy/x", "http://", "http://rm:8088/a b", "http://rm:8088/proxy/x?y"}) {
    const StatusPageOptions options{
        .bind_host = "127.0.0.1", .proxy_addresses = {"10.0.0.5"}, .proxy_base_url = url};
    EXPECT_EQ(page.Start(options).status().code(), absl::StatusCode::kInvalidArgument) << url;
  }
}

TEST(StatusPageTest, AnswersWhileAHundredHalfSentRequestsAreHeld) {
  StatusPage page;
  absl::StatusOr<int> port = page.Start("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status();
  page.Update(SampleStatus());

  HalfSentRequests held(*port, 100);
  ASSERT_EQ(held.size(), 100u);
  const std::string json = Request(*port, "GET", "/status.json");
  EXPECT_TRUE(IsStatus(json, 200)) << json;
  EXPECT_NE(json.find("application_1700000000000_0007"), std::string::npos) << json;
}

TEST(StatusPageTest, AnswersTheProxyWhileAnotherPeerHoldsAHundredHalfSentRequests) {
  StatusPage page;
  // 127.0.0.2 stands for the proxy's host, 127.0.0.1 for another one. The other peer tries to
  // take more than every slot; only its own limit leaves the proxy room.
  absl::StatusOr<int> port = page.Start(StatusPageOptions{.bind_host = "127.0.0.1",
                                                          .proxy_addresses = {"127.0.0.2"},
                                                          .proxy_base_url = kProxyBase,
                                                          .max_connections = 32});
  ASSERT_TRUE(port.ok()) << port.status();
  page.Update(SampleStatus());

  HalfSentRequests held(*port, 100, "127.0.0.1");
  const std::string json = Request(*port, "GET", "/status.json", "127.0.0.2");
  EXPECT_TRUE(IsStatus(json, 200)) << json;
  EXPECT_NE(json.find("application_1700000000000_0007"), std::string::npos) << json;
}

}  // namespace
}  // namespace tony::am
