// ARX 3.9.2's FLASH search on the eight Adult configurations of bench/arx/compare.sh, for the
// side-by-side with kanon_anonymize. ARX's default configuration (FLASH, its default loss
// metric) with the configuration's privacy models and suppression limit, on the CSV files the
// engine compiles in (data/adult/: Adult and ARX's hierarchies) and the Adult x10 table that
// bench/arx/adult_x10.py writes. Each configuration is run `warmups` times untimed in this JVM
// (as a long-lived one would be), then `runs` times, each timed by the thread CPU
// (ThreadMXBean) and wall time of `anonymize()`; data loading is outside the timing, as ours
// is outside the statement. Prints one CSV line per timed run:
//   config,run,cpu_ms,wall_ms,node,checked
// node: the global optimum's levels, `[age, sex, ...]` in the order the engine declares the
// quasi-identifiers (its report's `node`); checked: the lattice nodes ARX checked.
//
// Usage: java -cp <arx classes>:<arx jars>:. ArxKanon <data/adult> <adult_x10.csv> <warmups> <runs> [config ...]

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;

public class ArxKanon {

    static final List<String> QI7 = Arrays.asList(
        "age", "sex", "race", "marital-status", "education", "native-country", "workclass");
    static final List<String> QI9 = new ArrayList<>(QI7);
    static {
        QI9.add("occupation");
        QI9.add("salary-class");
    }

    /** One configuration: the rows of bench/arx/compare.sh's table. */
    static final class Config {
        final String name;
        final boolean x10;
        final List<String> qis;
        final int k;
        final double suppression;
        final String model; // "", "l3" (distinct 3-diversity) or "t0.15" (equal-distance t-closeness), on occupation

        Config(String name, boolean x10, List<String> qis, int k, double suppression, String model) {
            this.name = name;
            this.x10 = x10;
            this.qis = qis;
            this.k = k;
            this.suppression = suppression;
            this.model = model;
        }
    }

    static final Config[] CONFIGS = {
        new Config("adult7_k5", false, QI7, 5, 0, ""),
        new Config("adult7_k5_supp2", false, QI7, 5, 0.02, ""),
        new Config("adult7_k5_l3_supp2", false, QI7, 5, 0.02, "l3"),
        new Config("adult7_k5_t0.15_supp2", false, QI7, 5, 0.02, "t0.15"),
        new Config("adult7_k10", false, QI7, 10, 0, ""),
        new Config("adult7x10_k5", true, QI7, 5, 0, ""),
        new Config("adult9_k5", false, QI9, 5, 0, ""),
        new Config("adult9x10_k5", true, QI9, 5, 0, ""),
    };

    static Data data(File dir, File x10, Config c) throws Exception {
        Data data = Data.create(c.x10 ? x10 : new File(dir, "adult.csv"), StandardCharsets.UTF_8, ';');
        for (int i = 0; i < data.getHandle().getNumColumns(); i++) {
            String column = data.getHandle().getAttributeName(i);
            if (c.qis.contains(column)) {
                File file = new File(dir, "adult_hierarchy_" + column + ".csv");
                data.getDefinition().setAttributeType(column, Hierarchy.create(file, StandardCharsets.UTF_8, ';'));
            } else if (column.equals("occupation") && !c.model.isEmpty()) {
                data.getDefinition().setAttributeType(column, AttributeType.SENSITIVE_ATTRIBUTE);
            } else {
                data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }
        return data;
    }

    static ARXConfiguration configuration(Config c) {
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(c.k));
        if (c.model.equals("l3")) config.addPrivacyModel(new DistinctLDiversity("occupation", 3));
        if (c.model.equals("t0.15")) config.addPrivacyModel(new EqualDistanceTCloseness("occupation", 0.15));
        config.setSuppressionLimit(c.suppression);
        return config;
    }

    static String node(ARXNode optimum, List<String> columns) {
        String[] names = optimum.getQuasiIdentifyingAttributes();
        int[] levels = optimum.getTransformation();
        List<String> parts = new ArrayList<>();
        for (String column : columns) {
            for (int i = 0; i < names.length; i++) {
                if (names[i].equals(column)) parts.add(Integer.toString(levels[i]));
            }
        }
        return "[" + String.join(", ", parts) + "]";
    }

    static int checked(ARXResult result) {
        int n = 0;
        for (ARXNode[] level : result.getLattice().getLevels()) {
            for (ARXNode node : level) n += node.isChecked() ? 1 : 0;
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        File x10 = new File(args[1]);
        int warmups = Integer.parseInt(args[2]);
        int runs = Integer.parseInt(args[3]);
        List<String> only = Arrays.asList(args).subList(4, args.length);
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        for (Config c : CONFIGS) {
            if (!only.isEmpty() && !only.contains(c.name)) continue;
            Data data = data(dir, x10, c);
            ARXConfiguration config = configuration(c);
            for (int run = -warmups; run < runs; run++) {
                data.getHandle().release();
                long cpu = bean.getCurrentThreadCpuTime();
                long wall = System.nanoTime();
                ARXResult result = new ARXAnonymizer().anonymize(data, config);
                double cpuMs = (bean.getCurrentThreadCpuTime() - cpu) / 1e6;
                double wallMs = (System.nanoTime() - wall) / 1e6;
                if (run >= 0) {
                    System.out.println(String.format(Locale.ROOT, "%s,%d,%.3f,%.3f,\"%s\",%d", c.name, run, cpuMs, wallMs,
                        node(result.getGlobalOptimum(), QI9), checked(result)));
                }
            }
        }
    }
}
