# Sourced by the scripts that run a Java driver of ours against ARX 3.9.2 (bench/local,
# bench/arx): finds the build bench/risk/compare.sh makes from ARX's source (javac, the jars of
# its lib/ folder, the compile-only stubs of bench/risk/stubs), in target/risk-compare/arx unless
# ARX_BUILD names another directory holding its classes/ and lib/, compiles the driver
# $1 (a .java file) into $OUT/driver and sets CP, the class path to run it with.
# Needs OUT (an absolute directory).
ARX=${ARX_BUILD:-target/risk-compare/arx}
if [ ! -f "$ARX/classes/org/deidentifier/arx/ARXAnonymizer.class" ]; then
  echo "no ARX 3.9.2 build in $ARX: run ARX_REPO=/path/to/arx bench/risk/compare.sh first, or set ARX_BUILD" >&2
  exit 1
fi
ARX=$(cd "$ARX" && pwd)
mkdir -p "$OUT/driver"
CP="$ARX/classes:$OUT/driver:$(find "$ARX/lib" -name '*.jar' | tr '\n' ':')"
javac -d "$OUT/driver" -cp "$CP" "$1"
