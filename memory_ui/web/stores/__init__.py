"""What the portal keeps between two requests of one person, one module per concern:
Undo copies (`undo`), staged zip restores (`restores`), support staff's confirmations,
look-ups and deletion requests (`support`), a form whose sign-in expired (`pending_form`),
one-at-a-time claims (`claims`, a form's one addition in the database) and a batch delete's
one Undo (`batch_undo`); `kept` is how a record is kept for a while behind a token (Undo's
copies). Sessions and the cache are server-side (database or Redis), so any worker or
instance can serve the next request.
"""
