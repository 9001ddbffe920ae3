#include "history/history_pages.h"

#include <gtest/gtest.h>

namespace tony::history {
namespace {

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(HistoryPagesTest, EscapesEverythingFromTheJob) {
  EXPECT_EQ(HtmlEscape("<script>alert('x')&\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&amp;&quot;&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("ok\n\té\x1b[31m"), "ok\n\té?[31m");
  EXPECT_EQ(HtmlEscape(std::string("a\xff\xc3") + "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  JobInfo job;
  job.app_id = "application_1_0001";
  job.name = "<img src=x onerror=alert(1)>";
  job.state = "FAILED";
  const std::string list = RenderJobList({job}, {}, 0);
  EXPECT_EQ(list.find("<img"), std::string::npos) << list;
  EXPECT_NE(list.find("&lt;img src=x"), std::string::npos);
}

TEST(HistoryPagesTest, TheListFiltersByStateAndUser) {
  std::vector<JobInfo> jobs(3);
  jobs[0].app_id = "application_1_0003";
  jobs[0].state = "FAILED";
  jobs[0].user = "alice";
  jobs[1].app_id = "application_1_0002";
  jobs[1].state = "SUCCEEDED";
  jobs[1].user = "bob";
  jobs[2].app_id = "application_1_0001";
  jobs[2].state = "FAILED";
  jobs[2].user = "bob";
  const std::string failed = RenderJobList(jobs, {"FAILED", ""}, 0);
  EXPECT_EQ(Count(failed, "<tr class=\"job\">"), 2);
  EXPECT_EQ(failed.find("application_1_0002"), std::string::npos);
  const std::string bob_failed = RenderJobList(jobs, {"FAILED", "bob"}, 0);
  EXPECT_EQ(Count(bob_failed, "<tr class=\"job\">"), 1);
  EXPECT_NE(bob_failed.find("application_1_0001"), std::string::npos);
  // Newest first, as given.
  const std::string all = RenderJobList(jobs, {}, 0);
  EXPECT_LT(all.find("application_1_0003"), all.find("application_1_0001"));
}

std::vector<HistoryEvent> RestartedTask() {
  auto event = [](int64_t t, const char* kind, int attempt, const char* state = "",
                  std::optional<int> exit = std::nullopt) {
    HistoryEvent e;
    e.time_ms = t;
    e.kind = kind;
    e.task = "worker:1";
    e.attempt = attempt;
    e.state = state;
    e.exit_code = exit;
    return e;
  };
  return {event(1000, kEventTaskRequested, 0), event(1100, kEventTaskAllocated, 0),
          event(1200, kEventTaskStarted, 0),   event(2000, kEventTaskFinished, 0, "FAILED", 3),
          event(2000, kEventTaskRestarted, 1), event(2100, kEventTaskRequested, 1),
          event(2200, kEventTaskAllocated, 1), event(2300, kEventTaskStarted, 1)};
}

TEST(HistoryPagesTest, TheTimelineHasABarPerAttemptAndShowsWhatStillRuns) {
  const std::string svg = TimelineSvg(RestartedTask(), 3000);
  EXPECT_EQ(Count(svg, "<g class=\"attempt\""), 2) << svg;
  EXPECT_NE(svg.find("data-attempt=\"0\" data-state=\"FAILED\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-attempt=\"1\" data-state=\"RUNNING\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("worker:1 attempt 0: ran 0.8 s, FAILED (exit 3)"), std::string::npos) << svg;
  EXPECT_EQ(TimelineSvg({}, 0), "<p>No task events.</p>");
}

TEST(HistoryPagesTest, MetricPlotsAreDrawnPerTaskAttempt) {
  std::vector<MetricSample> samples;
  for (int i = 0; i < 4; ++i) {
    MetricSample s;
    s.time_ms = 1000 + i * 1000;
    s.task = "worker:0";
    s.cpu_seconds = 0.5 * i;  // half a core
    s.rss_bytes = int64_t{100 + i} << 20;
    samples.push_back(s);
  }
  const std::string cpu = MetricsSvg(samples, "cpu");
  EXPECT_NE(cpu.find("data-measure=\"cpu\""), std::string::npos);
  EXPECT_EQ(Count(cpu, "<polyline class=\"series\""), 1);
  EXPECT_NE(cpu.find(">50.0</text>"), std::string::npos) << "the top is 50% of a core\n" << cpu;
  const std::string memory = MetricsSvg(samples, "memory");
  EXPECT_NE(memory.find(">103.0</text>"), std::string::npos) << memory;
  EXPECT_EQ(MetricsSvg(samples, "gpu"), "") << "no GPU samples, no GPU plot";
  samples[1].gpu_utilization = 80;
  EXPECT_NE(MetricsSvg(samples, "gpu").find(">80.0</text>"), std::string::npos);
}

// What the tasks report of their progress: a bar in the task table, a step-rate plot and one
// plot for each metric they report.
TEST(HistoryPagesTest, ReportedProgressIsABarAStepRateAndAPlotPerMetric) {
  std::vector<MetricSample> samples;
  for (int i = 0; i < 4; ++i) {
    MetricSample s;
    s.time_ms = 1000 + i * 1000;
    s.task = "worker:0";
    s.step = 20 * i;  // 20 steps a second
    s.total = 100;
    s.values = {{"loss", 1.0 / (i + 1)}};
    samples.push_back(s);
  }
  const std::string rate = MetricsSvg(samples, "step-rate");
  EXPECT_NE(rate.find("Step rate (steps/s)"), std::string::npos) << rate;
  EXPECT_NE(rate.find(">20.0</text>"), std::string::npos) << rate;
  const std::string loss = MetricsSvg(samples, "value:loss");
  EXPECT_NE(loss.find(">loss (as reported)</text>"), std::string::npos) << loss;
  EXPECT_NE(loss.find(">1.0</text>"), std::string::npos) << loss;

  JobPage page;
  page.job = ParseJob(R"({"app_id":"application_1_0001","status":{"state":"JOB_RUNNING"}})");
  TaskRow row;
  row.type = "worker";
  row.step = 60;
  row.total = 100;
  page.job.tasks.push_back(row);
  page.metrics = samples;
  const std::string html = RenderJobPage(page);
  EXPECT_NE(html.find("<progress value=\"60\" max=\"100\"></progress> 60/100"), std::string::npos)
      << html;
  EXPECT_NE(html.find("data-measure=\"step-rate\""), std::string::npos);
  EXPECT_NE(html.find("data-measure=\"value:loss\""), std::string::npos);
}

TEST(HistoryPagesTest, AJobPageSaysWhatIsDamaged) {
  JobPage page;
  page.job = ParseJob(R"({"app_id":"application_1_0001","status":{"state":"JOB_RUN)");
  page.job.finished = true;
  page.bad_event_lines = 1;
  page.events = RestartedTask();
  const std::string html = RenderJobPage(page);
  EXPECT_NE(html.find("id=\"problems\""), std::string::npos);
  EXPECT_NE(html.find("job.json is not a JSON object"), std::string::npos) << html;
  EXPECT_NE(html.find("1 line(s) of events.jsonl could not be read"), std::string::npos);
  EXPECT_NE(html.find("its AM stopped before it recorded one"), std::string::npos);
  EXPECT_NE(html.find("<g class=\"attempt\""), std::string::npos) << "what could be read shows";
}

}  // namespace
}  // namespace tony::history
