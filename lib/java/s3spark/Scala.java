package s3spark;

import java.util.Collections;
import org.apache.spark.sql.catalyst.expressions.codegen.Block;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/** Scala values the Catalyst API takes, made from Java. */
final class Scala {
  private Scala() {}

  static <T> Seq<T> seq(T item) {
    return JavaConverters.asScalaBuffer(Collections.singletonList(item)).toSeq();
  }

  /** Generated Java code as a Block, like Spark's code"..." interpolator with no inputs. */
  static Block block(String code) {
    return new CodeBlock(seq(code), JavaConverters.asScalaBuffer(Collections.<JavaCode>emptyList()).toSeq());
  }
}
