// LoadProps loads every file of a directory with java.util.Properties.load
// through a UTF-8 Reader and prints, per file, "file NAME" and then either
// "error" or one "HEXKEY HEXVALUE" line per property, sorted by key (hex
// of the UTF-8 bytes, so that nothing is ambiguous). compat_test.go
// compares Load with it.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class LoadProps {
    public static void main(String[] args) throws IOException {
        File[] files = new File(args[0]).listFiles();
        Arrays.sort(files);
        StringBuilder out = new StringBuilder();
        for (File f : files) {
            out.append("file ").append(f.getName()).append('\n');
            Properties p = new Properties();
            try (Reader r = new InputStreamReader(new FileInputStream(f), StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IllegalArgumentException e) {
                out.append("error\n");
                continue;
            }
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String k : p.stringPropertyNames()) {
                sorted.put(hex(k), hex(p.getProperty(k)));
            }
            for (Map.Entry<String, String> e : sorted.entrySet()) {
                out.append(e.getKey()).append(' ').append(e.getValue()).append('\n');
            }
        }
        System.out.print(out);
    }

    static String hex(String s) {
        StringBuilder b = new StringBuilder("x");
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            b.append(String.format("%02x", c & 0xff));
        }
        return b.toString();
    }
}
