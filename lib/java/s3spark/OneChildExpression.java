package s3spark;

import java.io.Serializable;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import scala.collection.IndexedSeq;
import scala.collection.Seq;

/**
 * What Catalyst needs of an expression with one child and int parameters (tree, copy, equality), for
 * expressions written in Java: Spark's own UnaryExpression does not compile as a Java superclass.
 * The constructor of a subclass takes the child, then the parameters, in order (Spark copies trees that way).
 */
abstract class OneChildExpression extends Expression implements Serializable {
  protected final Expression child;
  private final int[] parameters;

  OneChildExpression(Expression child, int... parameters) {
    this.child = child;
    this.parameters = parameters.clone();
  }

  /** The same expression over another child. */
  protected abstract Expression withChild(Expression newChild);

  /** ev with this generated code, whose variables are ev's own. */
  static ExprCode withCode(ExprCode ev, String code) {
    return ev.copy(Scala.block(code), ev.isNull(), ev.value());
  }

  @Override
  public final Seq<Expression> children() {
    return Scala.seq(child);
  }

  @Override
  public final Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return withChild(children.apply(0));
  }

  @Override
  public final int productArity() {
    return 1 + parameters.length;
  }

  @Override
  public final Object productElement(int n) {
    return n == 0 ? child : (Object) parameters[n - 1];
  }

  @Override
  public final boolean canEqual(Object other) {
    return other != null && other.getClass() == getClass();
  }

  @Override
  public final boolean equals(Object other) {
    return canEqual(other)
        && Arrays.equals(parameters, ((OneChildExpression) other).parameters)
        && child.equals(((OneChildExpression) other).child);
  }

  @Override
  public final int hashCode() {
    return child.hashCode() * 31 + Arrays.hashCode(parameters);
  }
}
