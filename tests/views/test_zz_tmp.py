def test_dump(alice, fake):
    doc = "".join(
        f"## Added 2026-{1 + n // 28:02d}-{1 + n % 28:02d}T10:00:00Z \u2014 Trip\n\n- Fact {n}: prefers aisle seats and tea.\n\n"
        for n in range(110)
    )
    fake.put(doc)
    html = alice.get("/memory/user").content.decode()
    open("/tmp/i21-runs/page.html", "w").write(html)
    print(len(doc.encode()), len(html.encode()))
