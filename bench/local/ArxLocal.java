// ARX 3.9.2's local recoding on Adult, for bench/local/compare.sh: ARX's own recipe for it
// (its Example54: k-anonymity, suppression limit 100 %, the loss metric with gsFactor 0, then
// ARXResult.optimizeIterativeFast(output, 0.01)), on the engine's bundled Adult and ARX's
// hierarchies (data/adult/, the same CSV files the engine compiles in). Writes the release as a
// comma-separated CSV with the engine's column names (`_` for `-`) and release conventions (the
// numeric quasi-identifier `age` also as inclusive bounds `age_lo`, `age_hi`: the hull of the
// label's own range and the leaves ARX's hierarchy files under it, as the engine publishes them;
// NULL bounds for a suppressed record), and prints ARX's own quality figures for it, one
// "measure,value" line each.
//
// Usage: java -cp <arx classes>:<arx jars>:. ArxLocal <data/adult> <k> <records per step> <out.csv>

import java.io.File;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.aggregates.StatisticsQuality;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;

public class ArxLocal {

    static final List<String> QIS = Arrays.asList(
        "age", "sex", "race", "marital-status", "education", "native-country", "workclass");

    static String csv(String value) {
        if (value.contains(",") || value.contains("\"")) return "\"" + value.replace("\"", "\"\"") + "\"";
        return value;
    }

    /** age label -> {lo, hi}: the hull of the leaves under it and the range the label names. */
    static Map<String, int[]> ageBounds(String[][] hierarchy) {
        Map<String, int[]> bounds = new HashMap<>();
        for (String[] row : hierarchy) {
            int leaf = Integer.parseInt(row[0]);
            for (String label : row) {
                int[] b = bounds.computeIfAbsent(label, l -> new int[] {leaf, leaf});
                b[0] = Math.min(b[0], leaf);
                b[1] = Math.max(b[1], leaf);
                if (label.matches("\\d+")) {
                    int v = Integer.parseInt(label);
                    b[0] = Math.min(b[0], v);
                    b[1] = Math.max(b[1], v);
                } else if (label.matches("\\d+-\\d+")) {
                    String[] lh = label.split("-");
                    b[0] = Math.min(b[0], Integer.parseInt(lh[0]));
                    b[1] = Math.max(b[1], Integer.parseInt(lh[1]));
                }
            }
        }
        // The root covers the whole domain: every leaf and every range a label names.
        int[] root = bounds.get("*");
        for (int[] b : bounds.values()) {
            root[0] = Math.min(root[0], b[0]);
            root[1] = Math.max(root[1], b[1]);
        }
        return bounds;
    }

    static void print(String measure, double value) {
        System.out.println(measure + "," + String.format(Locale.ROOT, "%.6f", value));
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        int k = Integer.parseInt(args[1]);
        double records = Double.parseDouble(args[2]);
        String out = args[3];

        Data data = Data.create(new File(dir, "adult.csv"), StandardCharsets.UTF_8, ';');
        DataHandle input = data.getHandle();
        Map<String, int[]> age = null;
        for (int c = 0; c < input.getNumColumns(); c++) {
            String column = input.getAttributeName(c);
            if (QIS.contains(column)) {
                Hierarchy h = Hierarchy.create(new File(dir, "adult_hierarchy_" + column + ".csv"), StandardCharsets.UTF_8, ';');
                data.getDefinition().setAttributeType(column, h);
                if (column.equals("age")) age = ageBounds(h.getHierarchy());
            } else {
                data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }

        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(k));
        config.setSuppressionLimit(1d);
        config.setQualityModel(Metric.createLossMetric(0d));

        long start = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, config);
        DataHandle output = result.getOutput();
        int[] node = result.getGlobalOptimum().getTransformation();
        int globalOutliers = 0;
        for (int r = 0; r < output.getNumRows(); r++) globalOutliers += output.isOutlier(r) ? 1 : 0;
        StatisticsQuality global = output.getStatistics().getQualityStatistics();
        print("global_granularity", global.getGranularity().getArithmeticMean(false));
        print("global_suppressed_records", globalOutliers);
        result.optimizeIterativeFast(output, records);
        long ms = (System.nanoTime() - start) / 1_000_000;

        int outliers = 0;
        try (PrintWriter w = new PrintWriter(out, StandardCharsets.UTF_8)) {
            StringBuilder header = new StringBuilder();
            for (int c = 0; c < output.getNumColumns(); c++) {
                if (c > 0) header.append(',');
                header.append(output.getAttributeName(c).replace('-', '_'));
            }
            header.append(",age_lo,age_hi");
            w.println(header);
            for (int r = 0; r < output.getNumRows(); r++) {
                outliers += output.isOutlier(r) ? 1 : 0;
                StringBuilder line = new StringBuilder();
                for (int c = 0; c < output.getNumColumns(); c++) {
                    if (c > 0) line.append(',');
                    line.append(csv(output.getValue(r, c)));
                }
                if (output.isOutlier(r)) {
                    line.append(",,");
                } else {
                    int[] b = age.get(output.getValue(r, output.getColumnIndexOf("age")));
                    line.append(',').append(b[0]).append(',').append(b[1]);
                }
                w.println(line);
            }
        }

        StatisticsQuality q = output.getStatistics().getQualityStatistics();
        System.out.println("global_node," + Arrays.toString(node).replace(", ", "|"));
        print("granularity", q.getGranularity().getArithmeticMean(false));
        print("aecs", q.getAverageClassSize().getValue());
        print("discernibility", q.getDiscernibility().getValue());
        print("suppressed_records", outliers);
        print("classes", output.getStatistics().getEquivalenceClassStatistics().getNumberOfEquivalenceClasses());
        print("ms", ms);
    }
}
