package ckpt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// sockSend is the test binary acting as another process that talks to a
// watcher's socket (CKPT_TEST_SOCKSEND=<socket>, see TestMain): for each
// line of the JSON list on stdin it connects, sends the line, and prints
// the reply up to a result or an error, one line per request.
func sockSend(sock string) int {
	var lines []string
	if err := json.NewDecoder(os.Stdin).Decode(&lines); err != nil {
		fmt.Fprintln(os.Stderr, "socksend:", err)
		return 2
	}
	for _, line := range lines {
		fmt.Println(sockSendOne(sock, line))
	}
	return 0
}

func sockSendOne(sock, line string) string {
	c, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "<" + err.Error() + ">"
	}
	var out strings.Builder
	br := bufio.NewReader(c)
	for {
		l, err := br.ReadString('\n')
		out.WriteString(strings.TrimSpace(l))
		if err != nil {
			if out.Len() == 0 {
				return "<" + err.Error() + ">"
			}
			return out.String()
		}
		if strings.Contains(l, `"body"`) || strings.Contains(l, `"error"`) {
			return out.String()
		}
	}
}
