#include "kafka/client.h"

#include <gtest/gtest.h>

namespace neardup::kafka {
namespace {

TEST(Check, NoErrorObjectIsSuccess) { EXPECT_TRUE(check(nullptr)); }

TEST(Check, AnErrorObjectBecomesAValueWithItsCodeNameAndText) {
  // A producer without transactional.id refuses to begin a transaction.
  auto conf = make_conf({{"bootstrap.servers", "127.0.0.1:1"}});
  ASSERT_TRUE(conf) << conf.error();
  auto producer = make_producer(**conf);
  ASSERT_TRUE(producer) << producer.error();
  auto begun = check((*producer)->begin_transaction());
  ASSERT_FALSE(begun);
  EXPECT_EQ(begun.error().code, RdKafka::ERR__NOT_CONFIGURED);
  EXPECT_TRUE(begun.error().message.starts_with("_NOT_CONFIGURED: ")) << begun.error().message;
  EXPECT_FALSE(begun.error().txn_requires_abort);
  EXPECT_FALSE(begun.error().fatal);
}

}  // namespace
}  // namespace neardup::kafka
