import java.net.URI;
import java.nio.file.Path;
import java.security.URIParameter;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;

// ReadJAAS FILE NAME... prints each named section of the JAAS file as
// Java's ConfigFile reads it: "section NAME", then per entry "module
// CLASS FLAG" and "option KEY=VALUE" lines (sorted), or "missing NAME";
// or one line "error" when the file does not parse.
public class ReadJAAS {
    public static void main(String[] args) throws Exception {
        Configuration c;
        try {
            c = Configuration.getInstance("JavaLoginConfig", new URIParameter(Path.of(args[0]).toUri()));
        } catch (Exception e) {
            System.out.println("error");
            return;
        }
        for (int i = 1; i < args.length; i++) {
            AppConfigurationEntry[] es = c.getAppConfigurationEntry(args[i]);
            if (es == null) {
                System.out.println("missing " + args[i]);
                continue;
            }
            System.out.println("section " + args[i]);
            for (AppConfigurationEntry e : es) {
                String flag = e.getControlFlag().toString().replace("LoginModuleControlFlag: ", "");
                System.out.println("module " + e.getLoginModuleName() + " " + flag);
                for (var o : new TreeMap<String, Object>(e.getOptions()).entrySet()) {
                    System.out.println("option " + o.getKey() + "=" + o.getValue());
                }
            }
        }
    }
}
