#include "am/rendezvous_host.h"

#include "common/net.h"
#include "common/strings.h"
#include "runtime/horovod_plan.h"

namespace tony::am {

std::string_view RendezvousHost::name() const {
  return spec_->ElasticType() != nullptr ? "the c10d rendezvous" : "Horovod's rendezvous";
}

void RendezvousHost::Start(const std::string& bind_host, const std::string& advertised_host) {
  if (spec_->ElasticType() != nullptr) {
    store_ = make_store_(Kind::kC10d);
  } else if (spec_->framework == "horovod" && !spec_->horovod_debug_driver) {
    store_ = make_store_(Kind::kGloo);
  } else {
    return;
  }
  absl::StatusOr<int> port = store_->Start(bind_host);
  if (!port.ok()) {
    error_ = StrCat("cannot serve ", name(), ": ", ToStd(port.status().message()));
    store_.reset();
    return;
  }
  address_ = StrCat(HostForAddress(advertised_host), ":", *port);
}

void RendezvousHost::Stop() {
  if (store_) store_->Stop();
}

bool RendezvousHost::Awaits(const TaskRef& task) const {
  return spec_->framework == "horovod" && task.type == "worker" && address_.empty();
}

void RendezvousHost::AllowHost(const std::string& host) {
  if (store_) store_->AllowHost(host);
}

void RendezvousHost::SizeScopes(const std::map<std::string, std::vector<std::string>>& cluster) {
  if (!store_ || spec_->framework != "horovod") return;
  // The scopes of the rendezvous are cleared once as many ranks as the plan has finalized.
  if (absl::StatusOr<std::vector<runtime::HorovodSlot>> plan = runtime::HorovodPlan(cluster);
      plan.ok()) {
    store_->SetScopeSizes(runtime::HorovodScopeSizes(*plan));
  }
}

void RendezvousHost::Clear() {
  // The c10d store outlives every change of the elastic workers' group: torchrun's agents keep
  // their rendezvous in it (and an elastic job has no gang restart to clear it for).
  if (store_ && spec_->ElasticType() == nullptr) store_->Clear();
}

absl::Status RendezvousHost::Publish(const TaskRef& task, const TaskRecord* record,
                                     const std::string& container_id, int port) {
  if (!spec_->horovod_debug_driver || task != TaskRef{config::kHorovodDriverType, 0}) {
    return absl::PermissionDeniedError("only a Horovod debug driver publishes a rendezvous");
  }
  if (record == nullptr || record->container_id != container_id || record->host.empty() ||
      port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        StrCat("no rendezvous on port ", port, " of ", task.ToString(), " in ", container_id));
  }
  address_ = StrCat(HostForAddress(record->host), ":", port);
  return absl::OkStatus();
}

}  // namespace tony::am
