// SPDX-License-Identifier: Apache-2.0
// The report's time sections: wait seconds, occupancy, longest holds, holder activity.
#pragma once

#include <string>

#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/report/json_writer.hpp"

namespace lockwatch::report {

void write_lock_time_json(JsonWriter& w, const analysis::LockTimeReport& r);
void lock_time_text(std::string& out, const analysis::LockTimeReport& r);

}  // namespace lockwatch::report
