// Sarama 1.22 (Debian's golang-github-shopify-sarama-dev) against a Cairn
// cluster, in two configurations (tests/integration/sarama.sh):
//
// Modern: Config.Version = V2_1_0_0. ClusterAdmin creates a topic of two
// partitions; a SyncProducer (acks all) writes keyed records with
// headers; partition consumers read them back (keys, values, headers,
// offsets, timestamps); a ConsumerGroup consumes both partitions and
// marks the first three records of each; the group's committed offsets
// are read back (OffsetFetch) and a new group member resumes exactly
// there.
//
// Legacy: the default Config.Version (V0_8_2_0): metadata (Metadata v0)
// works; Produce v0 and Fetch v0 are versions Kafka 4.0 no longer serves
// (KIP-896), and the broker closes the connection on them as Kafka
// does: the client must get an error back in bounded time, not hang.
//
// Usage: sarama_flow BOOTSTRAP TOPIC
//
// Prints [PASS]/[FAIL] lines; exits 1 when a check failed.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

const (
	nPartitions = 2
	perPart     = 5 // records per partition
	marked      = 3 // records per partition the first group member marks
	group       = "sarama-group"
)

var failed int

func check(name string, ok bool, detail string, args ...interface{}) bool {
	if ok {
		fmt.Printf("[PASS] %s\n", name)
	} else {
		failed++
		fmt.Printf("[FAIL] %s: %s\n", name, fmt.Sprintf(detail, args...))
	}
	return ok
}

func fatal(name string, err error) {
	check(name, false, "%v", err)
	os.Exit(1)
}

// The record i of partition p, as produced and as expected back.
func key(p int32, i int) string   { return fmt.Sprintf("key-%d-%d", p, i) }
func value(p int32, i int) string { return fmt.Sprintf("value %d/%d: sarama", p, i) }
func headers(p int32, i int) []sarama.RecordHeader {
	return []sarama.RecordHeader{
		{Key: []byte("trace"), Value: []byte(fmt.Sprintf("t-%d-%d", p, i))},
		{Key: []byte("client"), Value: []byte("sarama-1.22")},
	}
}

// matches: the message is record i of partition p at offset i.
func matches(m *sarama.ConsumerMessage, p int32, i int) string {
	if m.Partition != p || m.Offset != int64(i) {
		return fmt.Sprintf("got partition %d offset %d, want %d/%d",
			m.Partition, m.Offset, p, i)
	}
	if string(m.Key) != key(p, i) || string(m.Value) != value(p, i) {
		return fmt.Sprintf("offset %d: key %q value %q", i, m.Key, m.Value)
	}
	want := headers(p, i)
	if len(m.Headers) != len(want) {
		return fmt.Sprintf("offset %d: %d headers, want %d", i,
			len(m.Headers), len(want))
	}
	for j, h := range m.Headers {
		if string(h.Key) != string(want[j].Key) ||
			string(h.Value) != string(want[j].Value) {
			return fmt.Sprintf("offset %d: header %d is %q=%q", i, j,
				h.Key, h.Value)
		}
	}
	return ""
}

func modernConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0
	cfg.ClientID = "cairn-sarama"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.CommitInterval = 200 * time.Millisecond
	cfg.Metadata.Retry.Max = 10
	return cfg
}

// waitLeaders: metadata names a leader for every partition of topic.
func waitLeaders(client sarama.Client, topic string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := client.RefreshMetadata(topic)
		if err == nil {
			ok := true
			for p := int32(0); p < nPartitions; p++ {
				if _, e := client.Leader(topic, p); e != nil {
					ok, err = false, e
				}
			}
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no leaders for %s: %v", topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func produce(client sarama.Client, topic string) {
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		fatal("sync producer", err)
	}
	defer producer.Close()
	var msgs []*sarama.ProducerMessage
	for i := 0; i < perPart; i++ {
		for p := int32(0); p < nPartitions; p++ {
			msgs = append(msgs, &sarama.ProducerMessage{
				Topic: topic, Partition: p,
				Key:     sarama.StringEncoder(key(p, i)),
				Value:   sarama.StringEncoder(value(p, i)),
				Headers: headers(p, i),
			})
		}
	}
	// One at a time, so each offset is known to belong to its record.
	bad := ""
	for n, m := range msgs {
		p, off, err := producer.SendMessage(m)
		if err != nil {
			fatal("SyncProducer.SendMessage (acks all)", err)
		}
		if p != m.Partition || off != int64(n/nPartitions) {
			bad += fmt.Sprintf(" record %d at %d/%d;", n, p, off)
		}
	}
	check(fmt.Sprintf("SyncProducer (acks all) wrote %d keyed records with "+
		"headers at offsets 0..%d of each partition", len(msgs), perPart-1),
		bad == "", "%s", bad)
}

func readPartitions(client sarama.Client, topic string, start time.Time) {
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		fatal("consumer", err)
	}
	defer consumer.Close()
	for p := int32(0); p < nPartitions; p++ {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			fatal("ConsumePartition", err)
		}
		bad := ""
		for i := 0; i < perPart && bad == ""; i++ {
			select {
			case m := <-pc.Messages():
				bad = matches(m, p, i)
				if bad == "" && (m.Timestamp.Before(start.Add(-time.Minute)) ||
					m.Timestamp.After(time.Now().Add(time.Minute))) {
					bad = fmt.Sprintf("offset %d: timestamp %v", i, m.Timestamp)
				}
			case e := <-pc.Errors():
				bad = e.Error()
			case <-time.After(15 * time.Second):
				bad = fmt.Sprintf("timed out at offset %d", i)
			}
		}
		hw := pc.HighWaterMarkOffset()
		pc.Close()
		check(fmt.Sprintf("partition consumer reads partition %d back "+
			"(keys, values, headers, offsets, timestamps), high watermark %d",
			p, hw), bad == "" && hw == perPart, "%s (high watermark %d)", bad, hw)
	}
}

// handler consumes every claim; it marks the messages below markBelow
// and reports each message and each claim's initial offset.
type handler struct {
	markBelow int64
	msgs      chan *sarama.ConsumerMessage
	mu        sync.Mutex
	initial   map[int32]int64
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession,
	c sarama.ConsumerGroupClaim) error {
	h.mu.Lock()
	h.initial[c.Partition()] = c.InitialOffset()
	h.mu.Unlock()
	for m := range c.Messages() {
		if m.Offset < h.markBelow {
			s.MarkMessage(m, "sarama-mark")
		}
		h.msgs <- m
	}
	return nil
}

// runGroup: a new ConsumerGroup member consumes until it has n messages
// (or 30 s pass), then leaves; returns them per partition in order.
func runGroup(boot []string, topic string, markBelow int64, n int) (
	map[int32][]*sarama.ConsumerMessage, map[int32]int64, error) {
	cg, err := sarama.NewConsumerGroup(boot, group, modernConfig())
	if err != nil {
		return nil, nil, err
	}
	h := &handler{markBelow: markBelow,
		msgs: make(chan *sarama.ConsumerMessage, 100), initial: map[int32]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// Consume returns at each rebalance, and with the coordinator's
		// retriable errors (the offsets partition still loading after its
		// creation, or moving): called again, as applications do.
		for retries := 0; ctx.Err() == nil; {
			err := cg.Consume(ctx, []string{topic}, h)
			if err != nil && retriable(err) && retries < 40 {
				retries++
				fmt.Printf("ConsumerGroup.Consume: %v (retrying)\n", err)
				time.Sleep(250 * time.Millisecond)
			} else if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	got := map[int32][]*sarama.ConsumerMessage{}
	timeout := time.After(30 * time.Second)
	var failure error
	for count := 0; count < n && failure == nil; {
		select {
		case m := <-h.msgs:
			got[m.Partition] = append(got[m.Partition], m)
			count++
		case e := <-cg.Errors():
			failure = e
		case e := <-done:
			failure = fmt.Errorf("Consume returned: %v", e)
		case <-timeout:
			failure = fmt.Errorf("timed out after %d of %d messages", count, n)
		}
	}
	cancel()
	// Close ends the session: the marked offsets are committed and the
	// member leaves the group.
	if err := cg.Close(); err != nil && failure == nil {
		failure = err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return got, h.initial, failure
}

func retriable(err error) bool {
	switch err {
	case sarama.ErrOffsetsLoadInProgress, sarama.ErrConsumerCoordinatorNotAvailable,
		sarama.ErrNotCoordinatorForConsumer:
		return true
	}
	return false
}

func committed(admin sarama.ClusterAdmin, topic string) (map[int32]int64, error) {
	parts := []int32{}
	for p := int32(0); p < nPartitions; p++ {
		parts = append(parts, p)
	}
	resp, err := admin.ListConsumerGroupOffsets(group,
		map[string][]int32{topic: parts})
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for p := int32(0); p < nPartitions; p++ {
		b := resp.GetBlock(topic, p)
		if b == nil {
			return nil, fmt.Errorf("no block for partition %d", p)
		}
		if b.Err != sarama.ErrNoError {
			return nil, b.Err
		}
		out[p] = b.Offset
	}
	return out, nil
}

func modern(boot []string, topic string) {
	start := time.Now()
	client, err := sarama.NewClient(boot, modernConfig())
	if err != nil {
		fatal("V2_1_0_0: NewClient (bootstrap)", err)
	}
	defer client.Close()
	check("V2_1_0_0: bootstrap sees 3 brokers", len(client.Brokers()) == 3,
		"%d brokers", len(client.Brokers()))
	ctrl, err := client.Controller()
	check("V2_1_0_0: metadata names a controller", err == nil && ctrl != nil,
		"%v", err)

	admin, err := sarama.NewClusterAdmin(boot, modernConfig())
	if err != nil {
		fatal("ClusterAdmin", err)
	}
	defer admin.Close()
	err = admin.CreateTopic(topic, &sarama.TopicDetail{
		NumPartitions: nPartitions, ReplicationFactor: 3}, false)
	check("ClusterAdmin.CreateTopic ("+topic+", 2 partitions, 3 replicas)",
		err == nil, "%v", err)
	if err := waitLeaders(client, topic); err != nil {
		fatal("leaders of "+topic, err)
	}
	// ListTopics asks any broker; one that is not the one CreateTopic went
	// through may take a moment to hold the new topic, as in Kafka.
	var topics map[string]sarama.TopicDetail
	var d sarama.TopicDetail
	found := false
	for deadline := time.Now().Add(10 * time.Second); ; {
		topics, err = admin.ListTopics()
		d, found = topics[topic]
		if (err == nil && found) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	check("ClusterAdmin.ListTopics lists it with 2 partitions, 3 replicas",
		err == nil && found && d.NumPartitions == nPartitions &&
			d.ReplicationFactor == 3, "%v %v %+v", err, found, d)

	produce(client, topic)
	readPartitions(client, topic, start)

	// A group member reads everything and marks the first three records
	// of each partition; on leaving it commits offset 3 for both.
	got, initial, err := runGroup(boot, topic, marked, nPartitions*perPart)
	bad := ""
	if err != nil {
		bad = err.Error()
	}
	for p := int32(0); p < nPartitions && bad == ""; p++ {
		// No committed offset yet: the claim starts at the requested
		// Consumer.Offsets.Initial (OffsetOldest, -2), which is offset 0.
		if initial[p] != sarama.OffsetOldest || len(got[p]) != perPart {
			bad = fmt.Sprintf("partition %d: initial offset %d, %d messages",
				p, initial[p], len(got[p]))
		}
		for i, m := range got[p] {
			if bad == "" {
				bad = matches(m, p, i)
			}
		}
	}
	check("ConsumerGroup member without a committed offset consumes both "+
		"partitions from the oldest offset (keys, values, headers, offsets)", bad == "", "%s", bad)

	offs, err := committed(admin, topic)
	check(fmt.Sprintf("the group's committed offsets (OffsetFetch) are %d "+
		"on both partitions after MarkMessage and Close", marked),
		err == nil && offs[0] == marked && offs[1] == marked,
		"%v %v", err, offs)

	// A new member resumes at the committed offsets: exactly the records
	// after them, nothing before.
	n := nPartitions * (perPart - marked)
	got, initial, err = runGroup(boot, topic, 0, n)
	bad = ""
	if err != nil {
		bad = err.Error()
	}
	for p := int32(0); p < nPartitions && bad == ""; p++ {
		if initial[p] != marked || len(got[p]) != perPart-marked {
			bad = fmt.Sprintf("partition %d: initial offset %d, %d messages",
				p, initial[p], len(got[p]))
		}
		for i, m := range got[p] {
			if bad == "" {
				bad = matches(m, p, marked+i)
			}
		}
	}
	check(fmt.Sprintf("a new group member resumes at offset %d: exactly "+
		"records %d..%d of each partition", marked, marked, perPart-1),
		bad == "", "%s", bad)
}

// legacy: the default version, V0_8_2_0.
func legacy(boot []string, topic string) {
	cfg := sarama.NewConfig()
	check("default Config.Version is V0_8_2_0",
		cfg.Version == sarama.V0_8_2_0, "%v", cfg.Version)
	cfg.ClientID = "cairn-sarama-legacy"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 1
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second

	client, err := sarama.NewClient(boot, cfg)
	if err != nil {
		fatal("V0_8_2_0: NewClient (bootstrap, Metadata v0)", err)
	}
	defer client.Close()
	parts, err := client.Partitions(topic)
	check("V0_8_2_0: bootstrap and Metadata v0: 3 brokers, "+topic+
		" with 2 partitions", err == nil && len(parts) == nPartitions &&
		len(client.Brokers()) == 3, "%v %v %d brokers", err, parts,
		len(client.Brokers()))
	leader, err := client.Leader(topic, 0)
	check("V0_8_2_0: Metadata v0 names the leader of partition 0",
		err == nil && leader != nil, "%v", err)

	// Produce v0: the broker closes the connection, as Kafka 4.0 does.
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		fatal("V0_8_2_0: sync producer", err)
	}
	t0 := time.Now()
	res := make(chan error, 1)
	go func() {
		_, _, err := producer.SendMessage(&sarama.ProducerMessage{
			Topic: topic, Partition: 0, Value: sarama.StringEncoder("v0")})
		res <- err
	}()
	select {
	case err = <-res:
		fmt.Printf("V0_8_2_0: Produce v0 answered in %.1fs with: %v\n",
			time.Since(t0).Seconds(), err)
		check("V0_8_2_0: Produce v0 is refused with a client-side error",
			err != nil, "SendMessage succeeded")
	case <-time.After(20 * time.Second):
		check("V0_8_2_0: Produce v0 is refused with a client-side error",
			false, "SendMessage still blocked after 20 s")
	}
	producer.Close()

	// Fetch v0: the partition consumer reports the closed connection on
	// its error channel (ListOffsets v0 before it is still served).
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		fatal("V0_8_2_0: consumer", err)
	}
	t0 = time.Now()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		fmt.Printf("V0_8_2_0: ConsumePartition failed: %v\n", err)
		check("V0_8_2_0: Fetch v0 is refused with a client-side error",
			true, "")
	} else {
		select {
		case e := <-pc.Errors():
			fmt.Printf("V0_8_2_0: Fetch v0 answered in %.1fs with: %v\n",
				time.Since(t0).Seconds(), e)
			check("V0_8_2_0: Fetch v0 is refused with a client-side error",
				true, "")
		case m := <-pc.Messages():
			check("V0_8_2_0: Fetch v0 is refused with a client-side error",
				false, "got a message at offset %d", m.Offset)
		case <-time.After(20 * time.Second):
			check("V0_8_2_0: Fetch v0 is refused with a client-side error",
				false, "no error and no message after 20 s")
		}
		pc.AsyncClose()
	}
	consumer.Close()

	// Consumer groups: sarama itself refuses them below V0_10_2_0.
	_, err = sarama.NewConsumerGroup(boot, group+"-legacy", cfg)
	if err != nil {
		fmt.Printf("V0_8_2_0: NewConsumerGroup: %v\n", err)
	}
	check("V0_8_2_0: NewConsumerGroup is refused by sarama itself",
		err != nil, "accepted")
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sarama_flow BOOTSTRAP TOPIC")
		os.Exit(2)
	}
	boot := strings.Split(os.Args[1], ",")
	modern(boot, os.Args[2])
	legacy(boot, os.Args[2])
	if failed > 0 {
		os.Exit(1)
	}
}
