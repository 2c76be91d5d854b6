// SPDX-License-Identifier: Apache-2.0
// A target's metric label: the application's name from its command line, never its pid,
// so series and dashboards survive a restart of the application.
#pragma once

#include <string>
#include <vector>

namespace lockwatch::service {

/// From the argument vector (never the command line split at spaces: an argument such as
/// "-Dx=a b.c" holds them): java -Xmx1g -cp app.jar com.shop.Main -> "Main"; java -jar
/// /opt/shop-1.2.jar -> "shop-1.2"; java -m app/com.shop.Main -> "Main"; /opt/shop/bin/server
/// -x -> "server" (a launcher that is not `java`); "jvm" when nothing fits. Only
/// [A-Za-z0-9_.-] are kept, at most 64 bytes.
std::string target_label(const std::vector<std::string>& argv);

}  // namespace lockwatch::service
