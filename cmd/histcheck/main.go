// Command histcheck reads a history written as JSON lines (internal/history's
// Write: the fault suite leaves one behind for each failing row, the nemesis
// for each failing run), checks it with history.Check, and prints the verdict
// and each anomaly with the ops that show it. It exits 1 if the history breaks
// the contract.
//
//	go run ./cmd/histcheck [-allow-late] [-html out.html] history.jsonl
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

func main() {
	allowLate := flag.Bool("allow-late", false, "accept OKs that returned after their window (a replica was paused)")
	htmlOut := flag.String("html", "", "write a timeline of the anomalies to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: histcheck [-allow-late] [-html out.html] history.jsonl")
		os.Exit(2)
	}
	os.Exit(run(flag.Arg(0), *htmlOut, *allowLate))
}

func run(path, htmlOut string, allowLate bool) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ops, err := history.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return 2
	}
	res := history.Check(ops, history.Options{AllowLate: allowLate})
	fmt.Println(res.Verdict())
	for _, a := range res.Anomalies {
		fmt.Println(a)
		for _, i := range a.Ops {
			js, _ := json.Marshal(ops[i])
			fmt.Printf("  #%d %s\n", i, js)
		}
	}
	if htmlOut != "" {
		out, err := os.Create(htmlOut)
		if err == nil {
			err = history.WriteHTML(out, ops, res)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	if !res.OK() {
		return 1
	}
	return 0
}
