package org.apache.hadoop.io;

/** Compile-only stand-in for hadoop-core's Writable (the jar is absent from ARX's repository). */
public interface Writable {
    void write(java.io.DataOutput out) throws java.io.IOException;
    void readFields(java.io.DataInput in) throws java.io.IOException;
}
