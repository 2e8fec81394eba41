# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST):
# internal/jaas, the reader of JAAS files (ZooKeeper's SASL users), against
# Java's ConfigFile in a JVM, on the table cases. The test runs a .java
# source file, so it needs a JDK, not only a JRE.
if java --list-modules 2>/dev/null | grep -q '^jdk.compiler'; then
	check java-jaas parse go-jaas "${GOTEST[@]}" -run '^TestParseMatchesJava$' ./internal/jaas/
else
	result FAIL java-jaas parse "no JDK (java with jdk.compiler) on PATH: apt-get install -y default-jdk-headless"
fi
