"""Where a swizzle is typed (the explorer, the banks lab), ``Sw<B,4,3>``, the byte form CuTe prints for the GMMA
atoms, is said to be taken on element offsets, with the element-offset form of the same hardware swizzle."""

from __future__ import annotations

from urllib.parse import quote

from app.services.swizzle_note import byte_form_note


def test_the_note_names_the_element_offset_form():
    assert "Sw<3,3,3>" in byte_form_note("Sw<3,4,3> o (8,64):(64,1)") and "SWIZZLE_128B" in byte_form_note("Sw<3,4,3>")
    assert "Sw<2,2,3>" in byte_form_note("Swizzle<2,4,3>", 4) and "SWIZZLE_64B" in byte_form_note("Sw<2,4,3>", 4)
    assert "Sw<1,1,3>" in byte_form_note("Sw<1, 4, 3>", 8)
    assert "byte offsets" in byte_form_note("Sw<3,4,3>", 1)
    assert byte_form_note("Sw<3,3,3> o (8,64):(64,1)") is None and byte_form_note("(8,64):(64,1)") is None


def test_the_explorer_and_the_banks_lab_say_it_where_it_is_typed(client):
    page = client.get("/?layout=" + quote("Sw<3,4,3> o (8,64):(64,1)"))
    assert page.status_code == 200 and 'id="sw-byte-note"' in page.text and "Sw&lt;3,3,3&gt;" in page.text
    assert 'id="sw-byte-note"' not in client.get("/?layout=" + quote("Sw<3,3,3> o (8,64):(64,1)")).text
    banks = client.get("/banks", params={"layout": "(32,32):(32,1)", "element_bytes": 4, "swizzle": "Sw<3,4,3>",
                                         "access": "column:0"})
    assert banks.status_code == 200 and 'id="sw-byte-note"' in banks.text and "Sw&lt;3,2,3&gt;" in banks.text
