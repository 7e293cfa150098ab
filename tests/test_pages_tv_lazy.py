"""The TV atlas's heavy sections (tiled copy / tiled MMA, copy and MMA walkthroughs, kernel path, TMA with a cluster,
Blackwell) are not in the first load: each comes as
a closed ``<details>`` holding its form, and its result arrives as the ``?panel=`` fragment when first opened. A query
that names one of a section's fields renders that section open and filled (its permalink)."""

from __future__ import annotations

import re

import pytest

from app.routes.pages_tv import DEFAULTS

HX = {"HX-Request": "true"}
TV_128 = "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C"  # bench/web.py's TV atlas permalink
#: section -> (a field of its form, ids that only its rendered result holds)
SECTIONS = {"tiled": ("tbits", ('id="grid-tiled"', 'id="tiled-tile"', 'id="tiled-tv"')),
            "copywalk": ("cw_t", ('id="copy-walk-thread"', 'id="copy-level-parts"', 'id="walk-src"')),
            "mmawalk": ("mw_t", ('id="mma-walk-thread"', 'id="mma-level-parts"', 'id="walk-part-c"')),
            "kernel": ("kp_t", ('id="kp-summary"', 'id="kp-step-1"', 'id="fig-kp-part-c"')),
            "tmac": ("tm_cluster", ('id="tmac-facts"', 'id="tmac-parts"', 'id="tmac-encode"')),
            "blackwell": ("bw_warp", ('id="umma-name"', 'id="umma-idesc-fields"', 'id="tmem-svg"'))}


def section_tag(html: str, name: str) -> str:
    m = re.search(rf'<details class="section" id="{name}-sec"[^>]*>', html)
    assert m, f"no closed-or-open section {name}"
    return m.group(0)


@pytest.mark.parametrize("url", ["/tv", TV_128])
def test_first_load_sends_the_heavy_sections_closed_and_empty(client, url):
    page = client.get(url).text
    for name, (field, result_ids) in SECTIONS.items():
        assert " open" not in section_tag(page, name)
        for rid in result_ids:
            assert rid not in page, f"{name}'s result {rid} is in the first load of {url}"
        assert f'hx-get="/tv?panel={name}"' in page and f'hx-include="#{name}-form"' in page
        assert f'name="{field}"' in page  # its form is there, so the fetch carries its fields


@pytest.mark.parametrize("name", list(SECTIONS))
def test_the_fragment_brings_what_the_first_load_left_out(client, name):
    field, result_ids = SECTIONS[name]
    closed = client.get("/tv")
    frag = client.get("/tv?panel=" + name)
    assert frag.status_code == 200 and "<html" not in frag.text and "<details" not in frag.text[:200]
    for rid in result_ids:
        assert rid in frag.text
    # the same block answers htmx's HX-Target (a form re-rendering its result) and ?panel= (the first opening)
    assert client.get("/tv", headers={**HX, "HX-Target": name}).text == frag.text
    # what the first load saves is the fragment: the page with the section open is bigger by about its size
    opened = client.get("/tv", params={field: DEFAULTS[field]})
    assert len(opened.content) - len(closed.content) > 0.9 * len(frag.content)


@pytest.mark.parametrize("name", list(SECTIONS))
def test_a_permalink_naming_a_section_field_opens_it_filled(client, name):
    field, result_ids = SECTIONS[name]
    value = {"tbits": "32", "cw_t": "9", "mw_t": "37", "kp_t": "5", "tm_cluster": "4", "bw_warp": "5"}[field]
    page = client.get(f"/tv?{field}={value}").text
    assert " open" in section_tag(page, name) and f'hx-get="/tv?panel={name}"' not in page
    for rid in result_ids:
        assert rid in page
    for other in set(SECTIONS) - {name}:  # the others stay closed
        assert " open" not in section_tag(page, other)
        assert SECTIONS[other][1][0] not in page
    frag = client.get(f"/tv?panel={name}&{field}={value}").text
    assert frag.strip() and frag.strip() in page  # the same block, rendered in place


def test_section_answers_follow_the_query(client):
    assert "following thread 5" in client.get("/tv?kp_t=5").text
    assert 'id="tmac-box">(64, 32)<' in client.get("/tv?tm_cluster=4").text
    assert 'id="tmem-lanes">32-63<' in client.get("/tv?bw_warp=5").text
    assert "following thread 7" in client.get("/tv?panel=kernel&kp_t=7").text
    assert 'role="alert"' in client.get("/tv?panel=blackwell&bw_m=96").text  # a bad field: inline, in the fragment
    assert 'id="copy-walk-thread">Following thread <b class="mono">9</b>' in client.get("/tv?cw_t=9").text
    frag = client.get("/tv?panel=mmawalk&mw_t=37").text
    assert 'id="mma-walk-thread">Following thread <b class="mono">37</b>' in frag
    assert 'role="alert"' in client.get("/tv?panel=copywalk&cw_t=100000").text
    mma = "tatom=SM80_16x8x16_F32F16F16F32_TN&tlayout=(2,2,1)"  # make_tiled_mma(atom, Layout<Shape<_2,_2,_1>>{})
    assert 'id="tiled-tile">32 x 16 x 16<' in client.get("/tv?" + mma).text
    assert 'id="tiled-tv">(32,2,2,1):(1,32,64,0)<' in client.get("/tv?panel=tiled&" + mma).text
    assert 'role="alert"' in client.get("/tv?panel=tiled&tthr=(((").text
    # each of the tiled form's fields is a permalink that opens it (its prefixes are whole names: "t" alone would
    # also catch the Hopper panel's tdtype / ttensor / tbox / tswz and the Triton panel's tt_*)
    for field in ("tatom", "tthr", "tval", "tbits", "tlayout", "top"):
        assert 'id="grid-tiled"' in client.get("/tv", params={field: DEFAULTS[field]}).text, field
    for field in ("tdtype", "ttensor", "tbox", "tswz", "tt_shape"):
        assert 'id="grid-tiled"' not in client.get("/tv", params={field: DEFAULTS[field]}).text, field


def test_the_tv_atlas_permalink_leaves_out_the_tiled_section_and_both_walkthroughs(client):
    """bench/web.py's 128x128 permalink names no field of the tiled section or the walkthroughs: all three come
    closed, and the page is smaller than what it was with them by about the three fragments."""
    page = client.get(TV_128)
    opened = client.get(TV_128 + "&tbits=16&cw_t=0&mw_t=0")
    frags = sum(len(client.get(f"/tv?panel={name}").content) for name in ("tiled", "copywalk", "mmawalk"))
    assert len(opened.content) - len(page.content) > 0.9 * frags
    for rid in ('id="copy-walk-thread"', 'id="mma-walk-thread"', 'id="grid-tiled"'):
        assert rid not in page.text and rid in opened.text


def test_a_closed_walkthrough_stays_out_of_the_other_forms_requests(client):
    """Every form sends the walkthrough and tiled forms' fields only while their section is open (hx-include through
    ``[open]``), so using another form does not write them into the address bar and its reload stays light."""
    page = client.get("/tv").text
    for form in re.findall(r'<form class="bar" id="[a-z]+-form"[^>]*>', page):
        inc = re.search(r'hx-include="([^"]*)"', form).group(1).split(", ")
        for name in ("tiled", "copywalk", "mmawalk"):
            assert f"#{name}-form" not in inc, form[:60]
            if "#tv-form" in inc:  # the forms that carry the page's other fields carry the open walkthroughs' too
                assert f"#{name}-sec[open] #{name}-form" in inc, form[:60]


#: the long menus of the sections sent closed (templates/_menu.html), by section
MENUS = {"tiled": ("tatom-select",), "copywalk": ("cw-atom",), "mmawalk": ("mw-atom",),
         "kernel": ("kp-atom", "kp-a", "kp-b", "kp-c"), "blackwell": ("bw-ld",)}


def _options(html: str) -> list[str]:
    return re.findall(r"<option[^>]*>[^<]*</option>", html)


def _text(option: str) -> str:
    return re.sub(r"<[^>]*>", "", option)


def test_a_closed_sections_long_menus_wait_in_a_template(client):
    """Sent closed, a section's atom menu holds only its chosen option and its whole list waits in an inert
    <template>: the same options, the same one chosen, as the section sent open shows (a permalink naming its
    fields). The first load then has a quarter of the <option>s: the browser's work on them was a fifth of the page's
    (docs/measurements.md)."""
    closed = client.get(TV_128).text
    opened = client.get(TV_128 + "&" + "&".join(f"{f}={DEFAULTS[f]}" for f, _ in SECTIONS.values())).text
    waiting = 0
    for name, ids in MENUS.items():
        assert " open" in section_tag(opened, name) and " open" not in section_tag(closed, name)
        for sid in ids:
            full = re.search(rf'<select id="{sid}" name="\w+">(.*?)</select>', opened, re.S)
            short = re.search(rf'<select id="{sid}" name="\w+" data-options="{sid}-all">(.*?)</select>'
                              rf'<template id="{sid}-all">(.*?)</template>', closed, re.S)
            assert full and short, sid
            assert "data-options" not in full.group(0) and f'id="{sid}-all"' not in opened
            assert short.group(2).split() == full.group(1).split()  # the same markup, whitespace aside
            chosen = [o for o in _options(full.group(1)) if " selected" in o] or _options(full.group(1))[:1]
            one, keeper = _options(short.group(1))
            assert " selected" in one and _text(one) == _text(chosen[0])  # the chosen name
            assert " hidden disabled" in keeper and _text(keeper) == max(map(_text, _options(full.group(1))), key=len)
            assert ('value=""' in one) == ('value=""' in chosen[0])  # "(none)" submits ""
            waiting += len(_options(short.group(2)))
    assert waiting > 1000 and len(_options(closed)) - waiting < 600


def test_the_atom_picker_is_sent_short_and_keeps_its_width(client):
    """The atom picker at the top (379 names, shown at once) holds its chosen atom and one hidden group with the
    longest group label and name, so its box is as wide as the whole list's (a monospace font: the longest is the
    widest); the list waits in a <template> in the menu's order, and static/app.js puts it in when the menu is
    reached (focus, pointer, the search box)."""
    from app.services.tv import atom_menu

    groups = atom_menu()
    html = client.get("/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C").text
    short = re.search(r'<select id="atom-select" name="atom" data-options="atom-select-all">(.*?)</select>'
                      r'<template id="atom-select-all">(.*?)</template>', html, re.S)
    assert short, "the atom picker is sent short"
    one, keeper = _options(short.group(1))
    assert one == "<option selected>SM90_64x256x16_F32F16F16_SS</option>"
    longest = max((n for _, names in groups for n in names), key=len)
    label = max((g for g, _ in groups), key=len)
    assert f'<optgroup label="{label}" hidden><option hidden disabled>{longest}</option></optgroup>' in short.group(1)
    assert re.findall(r'<optgroup label="([^"]*)">', short.group(2)) == [g for g, _ in groups]
    listed = [_text(o) for o in _options(short.group(2))]
    assert listed == [n for _, names in groups for n in names]
    assert [o for o in _options(short.group(2)) if " selected" in o] == [
        "<option selected>SM90_64x256x16_F32F16F16_SS</option>"]
    live = re.sub(r"<template .*?</template>", "", html, flags=re.S)
    assert len(_options(live)) < 150  # outside the templates: was 391 with the whole list in the picker
