package s3spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * split(line, delimiter, -1) for a one-byte ASCII delimiter, on the line's bytes; and an empty array for a
 * line that contains the quote byte (so its field count is never right and it goes to the CSV parser).
 *
 * <p>Spark's split() decodes each line to a Java String, splits it and encodes every field back to UTF-8.
 * Here the fields are views of the line's own bytes. A line with bytes above 0x7F is decoded and encoded
 * once first, as split() does, so invalid UTF-8 becomes U+FFFD exactly as there.
 */
public final class SplitOnByte extends OneChildExpression {
  private static final ArrayData NO_FIELDS = new GenericArrayData(new Object[0]);
  private final int delimiter;
  private final int quote;

  public SplitOnByte(Expression line, int delimiter, int quote) {
    super(line, delimiter, quote);
    if (delimiter < 0 || delimiter > 0x7F || quote < 0 || quote > 0x7F || delimiter == quote) {
      throw new IllegalArgumentException("delimiter and quote must be two different ASCII characters");
    }
    this.delimiter = delimiter;
    this.quote = quote;
  }

  public static ArrayData split(UTF8String line, byte delimiter, byte quote) {
    Object base = line.getBaseObject();
    long offset = line.getBaseOffset();
    int length = line.numBytes();
    int fieldCount = 1;
    boolean ascii = true;
    for (int i = 0; i < length; i++) {
      byte b = Platform.getByte(base, offset + i);
      if (b == delimiter) {
        fieldCount++;
      } else if (b == quote) {
        return NO_FIELDS;
      } else if (b < 0) {
        ascii = false;
      }
    }
    if (!ascii) {
      line = UTF8String.fromString(line.toString());
      base = line.getBaseObject();
      offset = line.getBaseOffset();
      length = line.numBytes();
    }
    Object[] fields = new Object[fieldCount];
    int field = 0;
    int start = 0;
    for (int i = 0; i < length; i++) {
      if (Platform.getByte(base, offset + i) == delimiter) {
        fields[field++] = UTF8String.fromAddress(base, offset + start, i - start);
        start = i + 1;
      }
    }
    fields[field] = UTF8String.fromAddress(base, offset + start, length - start);
    return new GenericArrayData(fields);
  }

  @Override
  public Object eval(InternalRow row) {
    Object value = child.eval(row);
    return value == null ? null : split((UTF8String) value, (byte) delimiter, (byte) quote);
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode input = child.genCode(ctx);
    String code = input.code() + "\n"
        + "boolean " + ev.isNull() + " = " + input.isNull() + ";\n"
        + ArrayData.class.getName() + " " + ev.value() + " = null;\n"
        + "if (!" + ev.isNull() + ") {\n"
        + "  " + ev.value() + " = s3spark.SplitOnByte.split(" + input.value() + ", (byte) " + delimiter
        + ", (byte) " + quote + ");\n"
        + "}";
    return withCode(ev, code);
  }

  @Override
  public DataType dataType() {
    return new ArrayType(DataTypes.StringType, false);
  }

  @Override
  public boolean nullable() {
    return child.nullable();
  }

  @Override
  protected Expression withChild(Expression newChild) {
    return new SplitOnByte(newChild, delimiter, quote);
  }

  @Override
  public String prettyName() {
    return "split_on_byte";
  }
}
