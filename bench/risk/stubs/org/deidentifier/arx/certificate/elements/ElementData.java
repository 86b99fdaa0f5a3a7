package org.deidentifier.arx.certificate.elements;

import org.deidentifier.arx.ARXLattice.Anonymity;

/** Compile-only stand-in: the PDF certificate is not built (pdfbox is absent). */
public class ElementData {
    public ElementData(String text) {}
    public ElementData addItem(String item) { return this; }
    public ElementData addProperty(String property, Anonymity value) { return this; }
    public ElementData addProperty(String property, boolean value) { return this; }
    public ElementData addProperty(String property, double value) { return this; }
    public ElementData addProperty(String property, int value) { return this; }
    public ElementData addProperty(String property, long value) { return this; }
    public ElementData addProperty(String property, String value) { return this; }
    public ElementData addProperty(String property, ElementData value) { return this; }
    public ElementData addPercentProperty(String property, double value) { return this; }
}
