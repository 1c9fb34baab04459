package awstest

import "testing"

func TestEmulator(t *testing.T) {
	for env, want := range map[string]string{"": Moto, "moto": Moto, "LocalStack": LocalStack, "aws": "aws"} {
		t.Setenv(EnvEmulator, env)
		if got := Emulator(); got != want {
			t.Errorf("%s=%q: Emulator() = %q, want %q", EnvEmulator, env, got, want)
		}
	}
}

func TestSkipOnSkipsOnlyOnTheNamedEmulator(t *testing.T) {
	t.Setenv(EnvEmulator, LocalStack)
	var skippedOnLocalStack, skippedOnMoto bool
	t.Run("localstack", func(t *testing.T) {
		defer func() { skippedOnLocalStack = t.Skipped() }()
		SkipOn(t, LocalStack, "no such API")
	})
	t.Run("moto", func(t *testing.T) {
		defer func() { skippedOnMoto = t.Skipped() }()
		SkipOn(t, Moto, "no such API")
	})
	if !skippedOnLocalStack || skippedOnMoto {
		t.Errorf("skipped on localstack %v (want true), on moto %v (want false)", skippedOnLocalStack, skippedOnMoto)
	}
}
