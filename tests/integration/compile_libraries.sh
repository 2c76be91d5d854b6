#!/usr/bin/env bash
# Compiles the library scenarios (tests/java/libraries/) against Debian's jars, at test time:
#   compile_libraries.sh OUT_DIR JDK17_HOME [JDK25_HOME]
# Writes OUT_DIR/jdk17-lib (and OUT_DIR/jdk25-lib when JDK 25 is there): the classes, Scenario
# included, and for each compiled scenario <Scenario>.classpath, one line: its jars, separated
# by ':' (the class directory itself not included). The jars of each scenario are listed in
# tests/java/libraries/jars.txt by their unversioned names in /usr/share/java (JAVA_JARS_DIR
# to look elsewhere). A scenario whose jars are missing is skipped with a message naming the
# Debian packages (scripts/deps.sh installs them); only a compile error fails.
set -euo pipefail
out=$1 jdk17=$2 jdk25=${3:-}
here="$(cd "$(dirname "$0")" && pwd)"
lib="$(cd "$here/../java/libraries" && pwd)"
scenarios="$(cd "$here/../java/scenarios" && pwd)"
jars_dir=${JAVA_JARS_DIR:-/usr/share/java}

package_of() {
  case $1 in
    logback-*) echo liblogback-java ;;
    slf4j-*) echo libslf4j-java ;;
    log4j-*) echo liblog4j2-java ;;
    commons-pool2) echo libcommons-pool2-java ;;
    netty-*) echo libnetty-java ;;
    tomcat10-*) echo libtomcat10-java ;;
    *) echo "unknown package" ;;
  esac
}

names=() sources=() classpaths=() all_jars=()
while read -r name jars; do
  [[ -z $name || $name == \#* ]] && continue
  present=() missing=() packages=()
  for j in $jars; do
    if [[ -r $jars_dir/$j.jar ]]; then
      present+=("$jars_dir/$j.jar")
    else
      missing+=("$j.jar")
      p=$(package_of "$j")
      [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p")
    fi
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "compile_libraries: SKIPPING $name: missing in $jars_dir: ${missing[*]}" \
      "(Debian: ${packages[*]}; scripts/deps.sh installs them)"
    continue
  fi
  names+=("$name")
  sources+=("$lib/$name.java")
  classpaths+=("$(IFS=:; echo "${present[*]}")")
  all_jars+=("${present[@]}")
done <"$lib/jars.txt"

compile() {  # compile JAVA_HOME TAG
  local jdk=$1 dir="$out/$2" i
  rm -rf "$dir" && mkdir -p "$dir"
  if [[ ${#names[@]} -eq 0 ]]; then
    echo "compile_libraries: no library scenario has its jars; nothing compiled for $2"
    return
  fi
  # -sourcepath: Scenario.java and the shared helpers (SlowLogPipe, LogbackFiles) come along.
  # -proc:none: log4j-core carries an annotation processor (its plugin cache); not ours to run.
  "$jdk/bin/javac" -proc:none -encoding UTF-8 --release 17 -d "$dir" \
    -cp "$(IFS=:; echo "${all_jars[*]}")" -sourcepath "$scenarios:$lib" "${sources[@]}"
  for i in "${!names[@]}"; do
    printf '%s\n' "${classpaths[$i]}" >"$dir/${names[$i]}.classpath"
  done
  echo "compile_libraries: $2: ${names[*]}"
}

compile "$jdk17" jdk17-lib
if [[ -n $jdk25 && -x $jdk25/bin/javac ]]; then
  compile "$jdk25" jdk25-lib
else
  echo "compile_libraries: no JDK 25 at '${jdk25}', the JDK 25 library scenarios will be skipped"
fi
