// ARX 3.9.2's risk estimates for a CSV table, for bench/risk/compare.sh. Prints one line
// "population,measure,value" per number risk_report gives, under the same measure names.
//
// Usage: java -cp <arx classes>:<arx jars>:. ArxRisk <file.csv> <qi,qi,...> <threshold> <population>...
//
// The CSV has a header row; a record whose every quasi-identifier is '*' is a suppressed
// record and is dropped before ARX sees it: ARX's risk models skip the outliers of an
// anonymized handle (DataHandle.isOutlier), and a table read from a file has none.

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.risk.RiskEstimateBuilder;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness;
import org.deidentifier.arx.risk.RiskModelSampleSummary;
import org.deidentifier.arx.risk.RiskModelSampleUniqueness;

public class ArxRisk {

    /** One CSV line: fields split on commas outside double quotes, "" an escaped quote. */
    static String[] fields(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') { cur.append('"'); i++; }
                else if (c == '"') { quoted = false; }
                else { cur.append(c); }
            } else if (c == '"') { quoted = true; }
            else if (c == ',') { out.add(cur.toString()); cur.setLength(0); }
            else { cur.append(c); }
        }
        out.add(cur.toString());
        return out.toArray(new String[0]);
    }

    public static void main(String[] args) throws Exception {
        String file = args[0];
        List<String> qis = Arrays.asList(args[1].split(","));
        double threshold = Double.parseDouble(args[2]);
        List<String[]> rows = new ArrayList<>();
        int suppressed = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(new FileInputStream(file), StandardCharsets.UTF_8))) {
            String[] header = fields(in.readLine());
            int[] qi = new int[qis.size()];
            for (int i = 0; i < qi.length; i++) {
                qi[i] = Arrays.asList(header).indexOf(qis.get(i));
                if (qi[i] < 0) throw new IllegalArgumentException("no column " + qis.get(i));
            }
            rows.add(header);
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) continue;
                String[] r = fields(line);
                boolean all = true;
                for (int i : qi) all &= r[i].equals("*");
                if (all) suppressed++; else rows.add(r);
            }
        }
        Data data = Data.create(rows);
        for (String column : rows.get(0)) {
            data.getDefinition().setAttributeType(column,
                qis.contains(column) ? AttributeType.QUASI_IDENTIFYING_ATTRIBUTE : AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        DataHandle handle = data.getHandle();
        Set<String> qiSet = new HashSet<>(qis);
        for (int p = 3; p < args.length; p++) {
            long population = Long.parseLong(args[p]);
            RiskEstimateBuilder b = handle.getRiskEstimator(ARXPopulationModel.create(population), qiSet);
            RiskModelSampleSummary s = b.getSampleBasedRiskSummary(threshold);
            RiskModelSampleUniqueness su = b.getSampleBasedUniquenessRisk();
            RiskModelPopulationUniqueness pu = b.getPopulationBasedUniquenessRisk();
            double n = b.getEquivalenceClassModel().getNumRecords();
            print(population, "records", n);
            print(population, "suppressed_records", suppressed);
            print(population, "classes", b.getEquivalenceClassModel().getNumClasses());
            print(population, "prosecutor_records_at_risk", s.getProsecutorRisk().getRecordsAtRisk());
            print(population, "prosecutor_highest_risk", s.getProsecutorRisk().getHighestRisk());
            print(population, "prosecutor_lowest_risk", s.getProsecutorRisk().getLowestRisk());
            print(population, "prosecutor_success_rate", s.getProsecutorRisk().getSuccessRate());
            print(population, "journalist_records_at_risk", s.getJournalistRisk().getRecordsAtRisk());
            print(population, "journalist_highest_risk", s.getJournalistRisk().getHighestRisk());
            print(population, "journalist_lowest_risk", s.getJournalistRisk().getLowestRisk());
            print(population, "journalist_success_rate", s.getJournalistRisk().getSuccessRate());
            print(population, "marketer_success_rate", s.getMarketerRisk().getSuccessRate());
            print(population, "sample_uniques", su.getFractionOfUniqueRecords());
            print(population, "population_size", population);
            print(population, "pitman_uniques", pu.getFractionOfUniqueTuplesPitman());
            print(population, "zayatz_uniques", pu.getFractionOfUniqueTuplesZayatz());
            print(population, "snb_uniques", pu.getFractionOfUniqueTuplesSNB());
            print(population, "population_uniques", pu.getFractionOfUniqueTuplesDankar());
            System.out.println(population + ",dankar_model," + pu.getPopulationUniquenessModel());
        }
    }

    static void print(long population, String measure, double value) {
        System.out.println(population + "," + measure + "," + String.format(Locale.ROOT, "%.12g", value));
    }
}
