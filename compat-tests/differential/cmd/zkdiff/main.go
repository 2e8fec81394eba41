// Command zkdiff sends the same seeded sequence of ZooKeeper operations to
// two running servers and prints the first differences between their
// replies (see package differential). It exits 1 when they differ, 2 on
// usage errors.
//
//	zkdiff [-seed N] [-ops N] [-max N] [-names a,b] [-4lw] HOST:PORT HOST:PORT
//
// Both servers must be fresh (only /zookeeper) and have extendedTypesEnabled
// and a container check interval longer than the run; with -4lw they must
// whitelist the four-letter words (differential.FourLetterWords).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkafka/zkafka/compat-tests/differential"
)

func main() {
	seed := flag.Uint64("seed", 20261129, "random seed of the operation sequence")
	n := flag.Int("ops", 2000, "number of operations (at most 100000)")
	limit := flag.Int("max", 10, "differences to print")
	names := flag.String("names", "A,B", "labels of the two servers")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound on the whole run")
	words := flag.Bool("4lw", false, "compare the four-letter words at the end of the run too")
	flag.Parse()
	if flag.NArg() != 2 || *n < 1 || *n > 100000 {
		flag.Usage()
		os.Exit(2)
	}
	label := strings.SplitN(*names+",B", ",", 3)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	ops := differential.Generate(*seed, *n)
	var cfg differential.Config
	if *words {
		cfg.FourLetterWords = differential.FourLetterWords
	}
	a, b := differential.RunPair(ctx, label[0], flag.Arg(0), label[1], flag.Arg(1), ops, cfg, cfg)
	fmt.Printf("seed %d, %d ops: %s %d records in %v, %s %d records in %v\n",
		*seed, *n, a.Name, len(a.Records), a.Duration.Round(time.Millisecond), b.Name, len(b.Records), b.Duration.Round(time.Millisecond))
	diffs := differential.Compare(a, b, *limit)
	if len(diffs) > 0 {
		fmt.Print(differential.Format(a, b, diffs))
		os.Exit(1)
	}
	if a.Err != nil || b.Err != nil {
		fmt.Printf("both runs stopped early: %v; %v\n", a.Err, b.Err)
		os.Exit(1)
	}
	fmt.Println("no differences")
}
