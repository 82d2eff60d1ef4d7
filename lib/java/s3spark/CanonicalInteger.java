package s3spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The integer whose canonical text (as Java prints it: no sign but '-', no leading zero, no spaces) a string
 * is, for a TINYINT, SMALLINT, INT or BIGINT column; null for any other text and for values out of range.
 *
 * <p>One pass over the bytes replaces a cast, a length check and a printed-length comparison in Catalyst.
 * BIGINT's minimum is never accepted (its text goes to the CSV parser, which reads it right).
 */
public final class CanonicalInteger extends OneChildExpression {
  private static final long NOT_CANONICAL = Long.MIN_VALUE;
  private final int bits;

  public CanonicalInteger(Expression text, int bits) {
    super(text, bits);
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
      throw new IllegalArgumentException("bits must be 8, 16, 32 or 64");
    }
    this.bits = bits;
  }

  /** The value of a canonical integer text within [min, max], else Long.MIN_VALUE. */
  public static long parse(UTF8String text, long min, long max) {
    Object base = text.getBaseObject();
    long offset = text.getBaseOffset();
    int length = text.numBytes();
    if (length == 0 || length > 20) {
      return NOT_CANONICAL;
    }
    boolean negative = Platform.getByte(base, offset) == '-';
    int i = negative ? 1 : 0;
    if (i == length) {
      return NOT_CANONICAL;
    }
    if (Platform.getByte(base, offset + i) == '0') {
      return length == 1 ? 0 : NOT_CANONICAL;
    }
    // Accumulated as a negative number, whose range holds every limit.
    long limit = negative ? min : -max;
    long value = 0;
    for (; i < length; i++) {
      int digit = Platform.getByte(base, offset + i) - '0';
      if (digit < 0 || digit > 9 || value < (limit + digit) / 10) {
        return NOT_CANONICAL;
      }
      value = value * 10 - digit;
    }
    return negative ? value : -value;
  }

  private long min() {
    return bits == 64 ? Long.MIN_VALUE + 1 : -(1L << (bits - 1));
  }

  private long max() {
    return bits == 64 ? Long.MAX_VALUE : (1L << (bits - 1)) - 1;
  }

  private String javaType() {
    return bits == 8 ? "byte" : bits == 16 ? "short" : bits == 32 ? "int" : "long";
  }

  @Override
  public Object eval(InternalRow row) {
    Object value = child.eval(row);
    if (value == null) {
      return null;
    }
    long parsed = parse((UTF8String) value, min(), max());
    if (parsed == NOT_CANONICAL) {
      return null;
    }
    return bits == 8 ? (Object) (byte) parsed
        : bits == 16 ? (Object) (short) parsed : bits == 32 ? (Object) (int) parsed : (Object) parsed;
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode input = child.genCode(ctx);
    String parsed = ctx.freshName("parsed");
    String code = input.code() + "\n"
        + "boolean " + ev.isNull() + " = true;\n"
        + javaType() + " " + ev.value() + " = (" + javaType() + ") 0;\n"
        + "if (!" + input.isNull() + ") {\n"
        + "  long " + parsed + " = s3spark.CanonicalInteger.parse(" + input.value() + ", " + min() + "L, "
        + max() + "L);\n"
        + "  if (" + parsed + " != " + NOT_CANONICAL + "L) {\n"
        + "    " + ev.isNull() + " = false;\n"
        + "    " + ev.value() + " = (" + javaType() + ") " + parsed + ";\n"
        + "  }\n"
        + "}";
    return withCode(ev, code);
  }

  @Override
  public DataType dataType() {
    return bits == 8 ? DataTypes.ByteType
        : bits == 16 ? DataTypes.ShortType : bits == 32 ? DataTypes.IntegerType : DataTypes.LongType;
  }

  @Override
  public boolean nullable() {
    return true;
  }

  @Override
  protected Expression withChild(Expression newChild) {
    return new CanonicalInteger(newChild, bits);
  }

  @Override
  public String prettyName() {
    return "canonical_integer";
  }
}
