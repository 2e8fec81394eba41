# Sourced by compat-tests/compat.sh (which defines check, result and GOTEST):
# internal/properties, the reader of zoo.cfg and server.properties, against
# java.util.Properties.load in a JVM, on the table cases and random inputs.
# The test runs a .java source file, so it needs a JDK, not only a JRE.
if java --list-modules 2>/dev/null | grep -q '^jdk.compiler'; then
	check java-properties load go-properties "${GOTEST[@]}" -run '^TestLoadMatchesJava$' ./internal/properties/
else
	result FAIL java-properties load "no JDK (java with jdk.compiler) on PATH: apt-get install -y default-jdk-headless"
fi
