CREATE FUNCTION broken() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN END $$;
