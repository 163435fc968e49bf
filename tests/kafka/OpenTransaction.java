// A member that crashed inside a transaction, for the end-to-end tests: commits offsets of a
// consumer group inside a transaction, prints "open" and waits, never ending the transaction.
// Killed, it leaves the offsets pending on the broker (OffsetFetch answers
// UNSTABLE_OFFSET_COMMIT for them) until the broker aborts the transaction after
// transaction.timeout.ms.
//
//   java -cp '<build>/tests/kafka/lib/*' tests/kafka/OpenTransaction.java \
//       BOOTSTRAP GROUP TOPIC PARTITIONS OFFSET TRANSACTION_TIMEOUT_MS
//
// Runs from source (java 11 or newer) on the broker's own jars: nothing to build.
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class OpenTransaction {
  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: OpenTransaction BOOTSTRAP GROUP TOPIC PARTITIONS OFFSET "
                         + "TRANSACTION_TIMEOUT_MS");
      System.exit(2);
    }
    Properties properties = new Properties();
    properties.put("bootstrap.servers", args[0]);
    properties.put("transactional.id", "open-transaction-" + args[1]);
    properties.put("transaction.timeout.ms", args[5]);
    properties.put("key.serializer", ByteArraySerializer.class.getName());
    properties.put("value.serializer", ByteArraySerializer.class.getName());
    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(properties);
    producer.initTransactions();
    producer.beginTransaction();
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (int partition = 0; partition < Integer.parseInt(args[3]); partition++) {
      offsets.put(new TopicPartition(args[2], partition),
                  new OffsetAndMetadata(Long.parseLong(args[4])));
    }
    // Blocks until the broker has the pending offsets.
    producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(args[1]));
    System.out.println("open");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
